/**
 * The lifecycle events `/v1/events` streams: the Pool's `server.start`, `server.stop`,
 * `server.era.stale`, `server.crash` and `server.start.failed`, and PendingCalls'
 * `question.unattributed` and `question.expired`, all shaped `{type, server, at, …}`, and the
 * ConfigWatcher's `config.reload` and `config.error` (which name no server),
 * framed as Server-Sent Events with the type as the `event:` name, and `:` comments to keep idle
 * connections (and the proxies between) from timing out.
 */
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import type { PoolEvent } from "@mcpx-fx/upstream/pool/PoolEvents"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import type { QuestionEvent } from "@mcpx-fx/gateway/PendingQuestions"
import * as Duration from "effect/Duration"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { ConfigEvent } from "./ConfigWatcher.js"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

/** Which events a subscriber wants; an absent list means all of them. */
export interface EventFilter {
  readonly types?: ReadonlyArray<string>
  readonly servers?: ReadonlyArray<string>
}

/** Reads `?types=a,b&server=x,y` into a filter. */
export const filterOf = (query: { readonly types?: string; readonly server?: string }): EventFilter => {
  const list = (s: string | undefined) => s?.split(",").map((x) => x.trim()).filter((x) => x.length > 0)
  const types = list(query.types)
  const servers = list(query.server)
  return { ...(types !== undefined && types.length > 0 ? { types } : {}), ...(servers !== undefined && servers.length > 0 ? { servers } : {}) }
}

/** Anything `/v1/events` sends. */
export type Event = PoolEvent | QuestionEvent | ConfigEvent

// An event that names no server passes a server filter only when there is none.
const matches = (filter: EventFilter) => (event: Event): boolean =>
  (filter.types === undefined || filter.types.includes(event.type)) &&
  (filter.servers === undefined || ("server" in event && filter.servers.includes(event.server)))

/** One event as an SSE frame. */
export const frame = (event: Event): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`

/**
 * The first frame, sent once the subscription is in place: a client that waits for it knows no
 * later event is missed.
 */
export const readyFrame = ": subscribed\n\n"

/** The keep-alive comment. */
export const keepAliveFrame = ": keep-alive\n\n"

/**
 * The SSE body: the ready comment, then matching events as they happen (each through `shape`,
 * which may take secrets out of a crash's stderr), with a keep-alive comment every `keepAlive`.
 * The Pool subscription lives as long as the stream is read.
 */
export const sse = (
  filter: EventFilter,
  keepAlive: Duration.DurationInput,
  shape: (event: Event) => Event = (event) => event,
  config?: Effect.Effect<Queue.Dequeue<ConfigEvent>, never, Scope.Scope>
): Stream.Stream<string, never, Pool | PendingCalls> =>
  Stream.unwrapScoped(
    Effect.map(
      Effect.all([Effect.flatMap(Pool, (pool) => pool.subscribe), Effect.flatMap(PendingCalls, (p) => p.events), config ?? Effect.succeed(undefined)]),
      ([lifecycle, questions, configQueue]) => {
        const sources: Stream.Stream<Event> = Stream.merge(Stream.fromQueue(lifecycle), Stream.fromQueue(questions))
        const all = configQueue === undefined ? sources : Stream.merge(sources, Stream.fromQueue(configQueue))
        const events = all.pipe(Stream.filter(matches(filter)), Stream.map((e) => frame(shape(e))))
        const pings = Stream.fromSchedule(Schedule.spaced(Duration.decode(keepAlive))).pipe(Stream.as(keepAliveFrame))
        return Stream.concat(Stream.make(readyFrame), Stream.merge(events, pings))
      }
    )
  )
