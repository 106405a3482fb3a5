/**
 * The fleet: several mcpx-fx daemons serving as one gateway, and how one of them reaches another.
 *
 * Almost every request is served by whichever instance it reaches: tasks live in a shared store
 * and `requestState` is keyed by a shared secret. What cannot be shared is a live upstream call:
 * it is pinned to the process holding its stdio child or its open stream. A request about such a
 * call (a retry naming a pending call, `tasks/update`, `tasks/cancel`) that reaches another
 * instance is sent to the one process that holds it, by that process's id, and answered there.
 *
 * The port only addresses processes: `send` one message of a `kind` to an instance and wait for
 * its reply, `serve` a kind here. What a kind means, and its payload's schema, belong to the
 * module that sends it. Every payload that arrives is untrusted: the implementations bound its
 * size, and each kind decodes its own with Schema before acting on it.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"

/** The most bytes one message may carry either way; larger ones are refused unread. */
export const MaxPayloadBytes = 1024 * 1024

/** What `fleet.instance` must look like: it prefixes session ids and names NATS subjects. */
export const InstanceNamePattern = /^[a-z0-9-]{1,32}$/

/**
 * What a process id must look like (`processIdOf`): one subject token. An id read from a handle or
 * a task row is checked before it names a subject, so nothing a caller sends can address another.
 */
export const ProcessIdPattern = /^[a-z0-9-]{1,48}$/

/** What a message kind must look like (a NATS subject token or dotted tokens). */
export const KindPattern = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/

/**
 * The process that should have answered is not running (NATS says at once that nothing listens
 * on its subject), or it stopped before it replied.
 */
export class InstanceGone extends Schema.TaggedError<InstanceGone>("@mcpx-fx/server/InstanceGone")("InstanceGone", {
  instance: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `mcpx-fx instance ${this.instance} is gone: ${this.detail}`
  }
}

/** The fleet could not carry a message: the engine is unreachable, the reply was late or malformed. */
export class FleetError extends Schema.TaggedError<FleetError>("@mcpx-fx/server/FleetError")("FleetError", {
  instance: Schema.String,
  kind: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `cannot reach mcpx-fx instance ${this.instance} (${this.kind}): ${this.detail}`
  }
}

/** Answers one message of a kind; what it cannot do it says in its reply, so it never fails. */
export type Handler = (payload: JsonObject) => Effect.Effect<JsonObject>

export interface FleetService {
  /** This process's id in the fleet: unique per process, so a restarted daemon inherits nothing. */
  readonly instance: string
  /** Sends one message to `instance` and waits up to `timeout` for its reply. */
  readonly send: (
    instance: string,
    kind: string,
    payload: JsonObject,
    timeout: Duration.DurationInput
  ) => Effect.Effect<JsonObject, InstanceGone | FleetError>
  /** Answers the messages of `kind` sent to this process, for as long as the scope lives. */
  readonly serve: (kind: string, handler: Handler) => Effect.Effect<void, never, Scope.Scope>
  /**
   * Whether this process is in no fleet (`single`): then a task or call another process holds
   * (a CLI and a daemon sharing one state dir) is none of its business, not a gone instance's.
   */
  readonly alone?: boolean
}

/**
 * The default instance name: the host's name and the process id, made to fit
 * `InstanceNamePattern` (a hostname may have dots and capitals).
 */
export const defaultInstanceName = (): string => {
  const host = hostname().toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "")
  const pid = String(process.pid)
  return `${host.slice(0, Math.max(1, 31 - pid.length))}-${pid}`.replace(/^-/, "h-")
}

/**
 * A process id from an instance name: the name (so an operator sees whose it is) and random hex
 * (so a daemon restarted under the same name does not answer for its dead predecessor's calls
 * and tasks).
 */
export const processIdOf = (name: string): string => `${name}-${randomBytes(4).toString("hex")}`

/** The no-fleet service: nobody else is ever there. */
export const single = (instance: string): FleetService => ({
  instance,
  send: (to, kind) => Effect.fail(new InstanceGone({ instance: to, detail: `no fleet is configured (fleet.nats), so ${kind} cannot reach it` })),
  serve: () => Effect.void,
  alone: true
})

export class Fleet extends Context.Tag("@mcpx-fx/server/Fleet")<Fleet, FleetService>() {
  /** One process alone: a fresh id, and every other instance gone. */
  static readonly single: Layer.Layer<Fleet> = Layer.sync(Fleet, () => single(processIdOf(defaultInstanceName())))

  /** One process alone, under a given id (tests). */
  static readonly singleWith = (instance: string): Layer.Layer<Fleet> => Layer.succeed(Fleet, single(instance))
}
