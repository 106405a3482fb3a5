/**
 * The last tool calls the daemon ran, for the live page (`GET /v1/calls/recent`): a bounded ring
 * in memory only (a restart forgets it, and nothing of it is written anywhere), newest last, each
 * call with a sequence number so a reader can wait for what it has not seen yet.
 *
 * Calls are recorded as they end, by wrapping `callTool` of the services every call passes
 * through: the Backend of MCP hosts and `/v1` tasks (whose caller names its client), and the
 * Gateway the `/v1` routes call (`/v1/call`, `/v1/ask`). The daemon does the wrapping
 * (`recordingBackend`, `recordingGateway`), so nothing else knows the ring exists.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Backend } from "@mcpx-fx/server/Backend"
import type { Gateway } from "@mcpx-fx/gateway/Gateway"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Schema from "effect/Schema"

/** One finished call. */
export const RecentCall = Schema.Struct({
  /** Rises by one per call recorded since the daemon started. */
  seq: Schema.Number,
  /** When the call began, epoch milliseconds. */
  at: Schema.Number,
  tool: Schema.String,
  /** `mcp`: a host on /mcp (or `serve`); `v1`: `/v1/call` or `/v1/ask`; `task`: a `/v1` task. */
  via: Schema.Literal("mcp", "v1", "task"),
  /** The host's clientInfo, `name version`, when it gave one. */
  client: Schema.optionalWith(Schema.String, { exact: true }),
  /** The revision the caller reached mcpx-fx with, when known. */
  revision: Schema.optionalWith(Schema.String, { exact: true }),
  session: Schema.optionalWith(Schema.String, { exact: true }),
  durationMs: Schema.Number,
  /** `input-required`: a modern host was handed questions and will retry (each round is a call). */
  outcome: Schema.Literal("ok", "tool-error", "input-required", "error", "cancelled"),
  /** What went wrong, for `error`: the failure's own message, cut short. */
  error: Schema.optionalWith(Schema.String, { exact: true })
})
export type RecentCall = typeof RecentCall.Type

/** A call as it is recorded: the ring numbers it. */
export type Finished = Omit<RecentCall, "seq">

/** The calls after a point, newest first, and the newest number there is. */
export interface Since {
  readonly calls: ReadonlyArray<RecentCall>
  readonly last: number
}

/** The ring. */
export class RecentCalls extends Context.Tag("@mcpx-fx/daemon/RecentCalls")<RecentCalls, {
  readonly capacity: number
  readonly record: (call: Finished) => Effect.Effect<void>
  /**
   * The calls numbered after `after`, waiting up to `wait` for one when there is none yet. An
   * `after` beyond the newest (a reader from before a restart) reads as 0: everything kept.
   */
  readonly since: (after: number, wait: Duration.DurationInput) => Effect.Effect<Since>
}>() {}

/** How many calls the daemon keeps. */
export const DefaultCapacity = 200

/** A ring of `capacity` calls. */
export const make = (capacity: number = DefaultCapacity): RecentCalls["Type"] => {
  const ring: Array<RecentCall> = []
  let seq = 0
  // Made by the first reader that waits for "something new", completed by the next call recorded:
  // a call nobody waits on pays no allocation for it.
  let next: Deferred.Deferred<void> | undefined
  const after = (n: number): Since => {
    const from = n > seq ? 0 : n
    return { calls: ring.filter((c) => c.seq > from).reverse(), last: seq }
  }
  return {
    capacity,
    record: (call) =>
      Effect.suspend(() => {
        seq += 1
        ring.push({ ...call, seq })
        if (ring.length > capacity) ring.shift()
        const done = next
        next = undefined
        return done === undefined ? Effect.void : Deferred.succeed(done, undefined)
      }),
    since: (n, wait) =>
      Effect.suspend(() => {
        if (n !== seq) return Effect.succeed(after(n))
        const waiting = next ??= Deferred.unsafeMake<void>(FiberId.none)
        return Effect.as(Effect.timeoutOption(Deferred.await(waiting), wait), undefined).pipe(Effect.map(() => after(n)))
      })
  }
}

const MaxErrorLength = 300

const outcomeOf = (result: JsonObject): RecentCall["outcome"] =>
  result.resultType === "input_required" ? "input-required" : result.isError === true ? "tool-error" : "ok"

/**
 * Runs `call` and records how it ended, timed on the Clock. It is on every call's path: the clock
 * is read directly and who called is described only once the call has ended.
 */
const recorded = <E extends { readonly message: string }>(
  ring: RecentCalls["Type"],
  who: () => Omit<Finished, "at" | "durationMs" | "outcome" | "error">,
  call: Effect.Effect<JsonObject, E>
): Effect.Effect<JsonObject, E> =>
  Effect.clockWith((clock) => {
    const at = clock.unsafeCurrentTimeMillis()
    return Effect.onExit(call, (exit) => {
      const base = { ...who(), at, durationMs: Math.max(0, clock.unsafeCurrentTimeMillis() - at) }
      if (Exit.isSuccess(exit)) return ring.record({ ...base, outcome: outcomeOf(exit.value) })
      if (Exit.isInterrupted(exit)) return ring.record({ ...base, outcome: "cancelled" })
      const failure = exit.cause._tag === "Fail" ? exit.cause.error.message : "the call died"
      return ring.record({ ...base, outcome: "error", error: failure.slice(0, MaxErrorLength) })
    })
  })

/**
 * `target` with `callTool` replaced: a Proxy rather than a copy, so what the service reads live
 * (the Gateway's `servers`, a getter that a reload changes) stays live.
 */
const withCallTool = <T extends { readonly callTool: unknown }>(target: T, callTool: T["callTool"]): T =>
  new Proxy(target, { get: (t, key, receiver) => (key === "callTool" ? callTool : Reflect.get(t, key, receiver)) })

// The identity `/v1` tasks run under (TaskRoutes.ts): `/v1:<session>`.
const TaskOwnerPrefix = "/v1:"

/**
 * The Backend of hosts and `/v1` tasks, recording every tool call. A copy, not a Proxy: the
 * Backend is a plain record, and every request reads it (a Proxy's trap on each read cost the
 * call path ~15 % of its CPU).
 */
export const recordingBackend = (backend: Backend["Type"], ring: RecentCalls["Type"]): Backend["Type"] => ({
  ...backend,
  callTool: (caller, name, args, meta) =>
    recorded(ring, () => {
      const task = caller.sessionId?.startsWith(TaskOwnerPrefix) === true
      const session = task ? caller.sessionId?.slice(TaskOwnerPrefix.length) : caller.sessionId
      const client = caller.clientInfo === undefined ? undefined : `${caller.clientInfo.name} ${caller.clientInfo.version}`.trim()
      return {
        tool: name,
        via: task ? "task" : "mcp",
        ...(task ? {} : { revision: caller.revision }),
        ...(client === undefined || client === "" ? {} : { client }),
        ...(session === undefined || session === "" ? {} : { session })
      }
    }, backend.callTool(caller, name, args, meta))
})

/** The Gateway the `/v1` routes use, recording every tool call they make. */
export const recordingGateway = (gateway: Gateway["Type"], ring: RecentCalls["Type"]): Gateway["Type"] =>
  withCallTool(gateway, (caller, name, args, meta, retry) =>
    recorded(ring, () => ({
      tool: name,
      via: "v1",
      ...(caller.revision === undefined ? {} : { revision: caller.revision }),
      ...(caller.sessionId === undefined ? {} : { session: caller.sessionId })
    }), gateway.callTool(caller, name, args, meta, retry)))
