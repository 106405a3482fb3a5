/**
 * The last tool calls the daemon ran, for the live page (`GET /v1/calls/recent`): a bounded ring
 * in memory only (a restart forgets it, and nothing of it is written anywhere), newest last, each
 * call with a sequence number so a reader can wait for what it has not seen yet.
 *
 * Calls are recorded as they end, from each call's one observation (@mcpx-fx/gateway's
 * CallObserver): the daemon gives the Backend of MCP hosts and `/v1` tasks the ring as its sink
 * (`sink`), and the `/v1` routes (`/v1/call`, `/v1/ask`) a Gateway that observes their calls
 * (`observingGateway`). A call is kept only while something reads the ring (`read`): with no page
 * open, the calls cost the ring nothing.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as CallResolution from "@mcpx-fx/gateway/CallResolution"
import * as CallObserver from "@mcpx-fx/gateway/CallObserver"
import type { CallSink, ObservedCall } from "@mcpx-fx/gateway/CallObserver"
import type { Gateway } from "@mcpx-fx/gateway/Gateway"
import type { Caller } from "@mcpx-fx/gateway/GatewayModel"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
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
  /** `record`, at once: for the call's observation, which ends in plain code. */
  readonly push: (call: Finished) => void
  /**
   * The calls numbered after `after`, waiting up to `wait` for one when there is none yet. An
   * `after` beyond the newest (a reader from before a restart) reads as 0: everything kept.
   */
  readonly since: (after: number, wait: Duration.DurationInput) => Effect.Effect<Since>
  /**
   * Whether anyone reads the ring now: a reader waiting, or one that read within `ReaderGrace`
   * (a live page asks again at least every 20 s). Calls nobody would see are not kept.
   */
  readonly read: (nowMs: number) => boolean
  /** Says the owner's views may have changed (a `/v1` call asked its caller something). */
  readonly nudge: () => void
  /** Completes at the next call recorded or the next nudge (OwnerChanges.ts waits on it). */
  readonly nudged: Effect.Effect<void>
}>() {}

/**
 * The ring of a daemon that keeps no calls (the API run in tests, embedders): an explicit layer, so
 * the API's type says it reads the ring. It shows nothing and is never nudged.
 */
export const off: Layer.Layer<RecentCalls> = Layer.succeed(RecentCalls, {
  capacity: 0,
  record: () => Effect.void,
  push: () => {},
  since: () => Effect.succeed({ calls: [], last: 0 }),
  read: () => false,
  nudge: () => {},
  nudged: Effect.never
})

/** How long after its last read a reader still counts as there (the page waits 20 s per read). */
export const ReaderGrace = 60_000

/** How many calls the daemon keeps. */
export const DefaultCapacity = 200

/** A ring of `capacity` calls. */
export const make = (capacity: number = DefaultCapacity): RecentCalls["Type"] => {
  const ring: Array<RecentCall> = []
  let seq = 0
  // Made by the first reader that waits for "something new", completed by the next call recorded:
  // a call nobody waits on pays no allocation for it.
  let next: Deferred.Deferred<void> | undefined
  let waiting = 0
  let changed: Deferred.Deferred<void> | undefined
  const nudge = () => {
    const done = changed
    changed = undefined
    if (done !== undefined) Deferred.unsafeDone(done, Exit.void)
  }
  let lastRead = Number.NEGATIVE_INFINITY
  const after = (n: number): Since => {
    const from = n > seq ? 0 : n
    return { calls: ring.filter((c) => c.seq > from).reverse(), last: seq }
  }
  const push = (call: Finished): void => {
    seq += 1
    ring.push({ ...call, seq })
    if (ring.length > capacity) ring.shift()
    const done = next
    next = undefined
    if (done !== undefined) Deferred.unsafeDone(done, Exit.void)
    nudge()
  }
  return {
    capacity,
    push,
    record: (call) => Effect.sync(() => push(call)),
    since: (n, wait) =>
      Effect.clockWith((clock) => {
        lastRead = clock.unsafeCurrentTimeMillis()
        if (n !== seq) return Effect.succeed(after(n))
        const pending = next ??= Deferred.unsafeMake<void>(FiberId.none)
        waiting++
        return Effect.as(Effect.timeoutOption(Deferred.await(pending), wait), undefined).pipe(
          Effect.ensuring(Effect.sync(() => {
            waiting--
            lastRead = clock.unsafeCurrentTimeMillis()
          })),
          Effect.map(() => after(n))
        )
      }),
    read: (nowMs) => waiting > 0 || nowMs - lastRead < ReaderGrace,
    nudge,
    nudged: Effect.suspend(() => Deferred.await(changed ??= Deferred.unsafeMake<void>(FiberId.none)))
  }
}

const MaxErrorLength = 300

const outcomeOf = (result: JsonObject): RecentCall["outcome"] =>
  result.resultType === "input_required" ? "input-required" : result.isError === true ? "tool-error" : "ok"

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : "the call failed"

// The identity `/v1` tasks run under (TaskRoutes.ts): `/v1:<session>`.
const TaskOwnerPrefix = "/v1:"

/** A call the gateway observed (CallObserver.ts), as the ring keeps it; who called is described only now. */
export const finishedOf = (call: ObservedCall): Finished => {
  const { exit, observation: o } = call
  const task = o.entry !== "v1" && o.sessionId?.startsWith(TaskOwnerPrefix) === true
  const session = task ? o.sessionId?.slice(TaskOwnerPrefix.length) : o.sessionId
  const client = o.clientInfo === undefined ? undefined : `${o.clientInfo.name} ${o.clientInfo.version}`.trim()
  const base = {
    at: call.at,
    durationMs: call.durationMs,
    tool: o.tool,
    via: o.entry === "v1" ? "v1" as const : task ? "task" as const : "mcp" as const,
    ...(task || o.revision === undefined ? {} : { revision: o.revision }),
    ...(client === undefined || client === "" ? {} : { client }),
    ...(session === undefined || session === "" ? {} : { session })
  }
  if (Exit.isSuccess(exit)) return { ...base, outcome: outcomeOf(exit.value) }
  if (Exit.isInterrupted(exit)) return { ...base, outcome: "cancelled" }
  const failure = exit.cause._tag === "Fail" ? messageOf(exit.cause.error) : "the call died"
  return { ...base, outcome: "error", error: failure.slice(0, MaxErrorLength) }
}

/** The ring as the place observed calls go (CallSinks' `ring`): kept only while someone reads it. */
export const sink = (ring: RecentCalls["Type"]): CallSink => ({
  wanted: ring.read,
  record: (call) => ring.push(finishedOf(call))
})

/**
 * The Gateway the `/v1` routes use: each tool call they make is observed as a `/v1` call (its
 * log line, and the ring), and the Gateway under it only fills the observation in. A Proxy rather
 * than a copy, so what the service reads live (the Gateway's `servers`, a getter that a reload
 * changes) stays live.
 */
export const observingGateway = (gateway: Gateway["Type"], ring: RecentCalls["Type"]): Gateway["Type"] => {
  const sinks = { ring: sink(ring) }
  // A `/v1/ask` call's question shows on the page: the page is told when one is asked and answered.
  const told = (questions: NonNullable<Caller["questions"]>): NonNullable<Caller["questions"]> => (question) =>
    Effect.ensuring(Effect.zipRight(Effect.sync(ring.nudge), questions(question)), Effect.sync(ring.nudge))
  const callTool: Gateway["Type"]["callTool"] = (caller, name, args, meta, retry) => {
    const observation = new CallObserver.Observation("v1", CallResolution.hostName(name), caller.sessionId, caller.revision, undefined)
    const observed = caller.questions === undefined ? { ...caller, observation } : { ...caller, observation, questions: told(caller.questions) }
    return CallObserver.observe(sinks, observation, false, gateway.callTool(observed, name, args, meta, retry))
  }
  return new Proxy(gateway, { get: (t, key, receiver) => (key === "callTool" ? callTool : Reflect.get(t, key, receiver)) })
}
