/**
 * The legacy Streamable HTTP sessions of `/mcp` (2025-03-26 … 2025-11-25): minted by `initialize`,
 * ended by DELETE, by the idle timeout, by eviction past the cap or by shutdown, each with its own
 * Server connection, its own requests (so `notifications/cancelled` can reach them) and at most
 * one GET notification stream.
 *
 * Both bounds are about abandoned sessions, which no client ever ends: the idle timeout counts
 * from the last request, and an open GET stream does not stop it (a socket held open is no sign
 * of a client still there); the cap, when reached, ends the least recently used session that has
 * nothing in flight, and refuses the new one only when every session is busy.
 *
 * A session's requests and its GET stream live in the session's scope, not in the HTTP request
 * that started them: the legacy revisions say a dropped connection is not a cancellation, so only
 * `notifications/cancelled` and the end of the session stop them.
 */
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { randomBytes } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { type Connection, makeConnection } from "../Server.js"
import * as Subscriptions from "../Subscriptions.js"
import * as SessionRequests from "./SessionRequests.js"

/** One legacy session. */
export interface Session {
  readonly id: string
  readonly connection: Connection
  /** The session's requests in flight, by JSON-RPC id. */
  readonly requests: SessionRequests.SessionRequests
  readonly scope: Scope.Scope
  /** The resources this session subscribed to, held until unsubscribed or the session ends. */
  readonly watches: Subscriptions.Watches
}

interface Entry {
  readonly session: Session
  readonly scope: Scope.CloseableScope
  readonly lastSeen: Ref.Ref<number>
  /** The open GET stream's queue, if one is open. */
  stream: Mailbox.Mailbox<JsonRpc.Message> | undefined
}

/** Who a notification is for. */
export type Target = string | "all"

/** Every one of the `max` sessions has a request in flight, so none could make room for another. */
export class SessionsFull extends Data.TaggedError("SessionsFull")<{ readonly max: number }> {}

/** The session registry. */
export interface Sessions {
  /**
   * A new session that is not reachable until `register`ed (its `initialize` may still fail). At
   * the cap, the least recently used idle session is ended first; with none idle it fails.
   */
  readonly create: Effect.Effect<Session, SessionsFull>
  readonly register: (session: Session) => Effect.Effect<void>
  /** Discards a session that was never registered. */
  readonly discard: (session: Session) => Effect.Effect<void>
  /** A live session by id (undefined if unknown or ended); counts as activity. */
  readonly get: (id: string) => Effect.Effect<Session | undefined>
  /** Ends a session: its requests are interrupted, its GET stream closes. False if unknown. */
  readonly end: (id: string) => Effect.Effect<boolean>
  readonly endAll: Effect.Effect<void>
  /** Closes every open GET stream (the process is stopping); the sessions and their requests go on. */
  readonly endStreams: Effect.Effect<void>
  /** Opens the session's GET stream, or undefined when one is already open. */
  readonly openStream: (session: Session) => Effect.Effect<Mailbox.ReadonlyMailbox<JsonRpc.Message> | undefined>
  /** Frees the stream slot once that stream is gone. */
  readonly closeStream: (session: Session, stream: Mailbox.ReadonlyMailbox<JsonRpc.Message>) => Effect.Effect<void>
  /** Delivers to open GET streams; returns how many took it (none open: dropped, there is no redelivery). */
  readonly notify: (target: Target, notification: JsonRpc.Notification) => Effect.Effect<number>
  readonly ids: Effect.Effect<ReadonlyArray<string>>
}

/** A session id: 192 random bits, base64url, so visible ASCII only and unguessable. */
export const mintId = (): string => randomBytes(24).toString("base64url")

/** How many undelivered notifications a GET stream holds before the oldest are dropped. */
const StreamBacklog = 256

/**
 * The registry, owned by `scope`. With `idleTimeout`, a session that has seen no request and has
 * no request in flight for that long is ended (its GET stream, if open, closes). At most
 * `maxSessions` are held, pending ones included.
 */
export const makeSessions = (
  scope: Scope.Scope,
  options: {
    readonly idleTimeout: Duration.DurationInput | undefined
    readonly maxSessions: number
    /** Put before every id minted (HttpHostOptions.sessionIdPrefix). */
    readonly idPrefix?: string
  }
): Effect.Effect<Sessions> =>
  Effect.sync(() => {
    const idleTimeout = options.idleTimeout
    // In order of last use, least recent first: `get` moves a session to the end.
    const live = new Map<string, Entry>()
    const pending = new Map<string, Entry>()

    const close = (entry: Entry): Effect.Effect<void> =>
      Effect.zipRight(
        entry.stream === undefined ? Effect.void : Effect.asVoid(entry.stream.end),
        Scope.close(entry.scope, Exit.void)
      )

    const end = (id: string): Effect.Effect<boolean> =>
      Effect.suspend(() => {
        const entry = live.get(id)
        if (entry === undefined) return Effect.succeed(false)
        live.delete(id)
        return Effect.as(close(entry), true)
      })

    const busy = (entry: Entry): Effect.Effect<boolean> => Effect.sync(() => entry.session.requests.size() > 0)

    /** Makes room for one more session, ending the least recently used idle one if need be. */
    const makeRoom: Effect.Effect<void, SessionsFull> = Effect.suspend(() => {
      if (live.size + pending.size < options.maxSessions) return Effect.void
      return Effect.gen(function*() {
        for (const entry of live.values()) {
          if (yield* busy(entry)) continue
          yield* Effect.logInfo(`legacy session ended to make room: ${options.maxSessions} sessions is the most held (transport.maxSessions)`)
          // From a fiber of the registry's own scope, as the reaper does: closed from the
          // initialize that needs the room, each ended session stayed reachable (16 KB apiece).
          yield* Fiber.join(yield* Effect.forkIn(end(entry.session.id), scope))
          return
        }
        return yield* new SessionsFull({ max: options.maxSessions })
      })
    })

    // Ends the session from outside its own scope: closing a scope from a fiber the scope owns
    // would wait for that very fiber to be interrupted.
    const reaper = (entry: Entry, idle: Duration.Duration): Effect.Effect<void> => {
      const idleMillis = Duration.toMillis(idle)
      const loop: Effect.Effect<void> = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const left = (yield* Ref.get(entry.lastSeen)) + idleMillis - now
        if (left > 0) return yield* Effect.zipRight(Effect.sleep(Duration.millis(left)), loop)
        if (yield* busy(entry)) return yield* Effect.zipRight(Effect.sleep(idle), loop)
        yield* Effect.forkIn(end(entry.session.id), scope)
      })
      return loop
    }

    const create: Effect.Effect<Session, SessionsFull> = Effect.gen(function*() {
      yield* makeRoom
      const id = `${options.idPrefix ?? ""}${mintId()}`
      const sessionScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      const connection = yield* makeConnection(id)
      const requests = yield* Scope.extend(SessionRequests.make, sessionScope)
      const lastSeen = yield* Effect.flatMap(Clock.currentTimeMillis, Ref.make)
      const watches = yield* Scope.extend(Subscriptions.makeWatches, sessionScope)
      const session: Session = { id, connection, requests, scope: sessionScope, watches }
      pending.set(id, { session, scope: sessionScope, lastSeen, stream: undefined })
      return session
    })

    const register = (session: Session): Effect.Effect<void> =>
      Effect.suspend(() => {
        const entry = pending.get(session.id)
        if (entry === undefined) return Effect.void
        pending.delete(session.id)
        live.set(session.id, entry)
        return idleTimeout === undefined
          ? Effect.void
          : Effect.asVoid(Effect.forkIn(reaper(entry, Duration.decode(idleTimeout)), entry.scope))
      })

    const discard = (session: Session): Effect.Effect<void> =>
      Effect.suspend(() => {
        const entry = pending.get(session.id)
        if (entry === undefined) return Effect.void
        pending.delete(session.id)
        return close(entry)
      })

    const get = (id: string): Effect.Effect<Session | undefined> =>
      Effect.suspend(() => {
        const entry = live.get(id)
        if (entry === undefined) return Effect.succeed(undefined)
        live.delete(id)
        live.set(id, entry)
        return Effect.clockWith((clock) => Effect.as(Ref.set(entry.lastSeen, clock.unsafeCurrentTimeMillis()), entry.session))
      })

    const openStream = (session: Session) =>
      Effect.suspend(() => {
        const entry = live.get(session.id)
        if (entry === undefined || entry.stream !== undefined) return Effect.succeed(undefined)
        return Effect.map(
          Mailbox.make<JsonRpc.Message>({ capacity: StreamBacklog, strategy: "sliding" }),
          (mailbox) => {
            entry.stream = mailbox
            return mailbox
          }
        )
      })

    const closeStream = (session: Session, stream: Mailbox.ReadonlyMailbox<JsonRpc.Message>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.suspend(() => {
          const entry = live.get(session.id)
          if (entry === undefined || entry.stream !== stream) return Effect.void
          entry.stream = undefined
          // A client that was listening gets the whole idle time from when it stopped.
          return Ref.set(entry.lastSeen, now)
        }))

    const notify = (target: Target, notification: JsonRpc.Notification) =>
      Effect.suspend(() => {
        const entries = target === "all" ? [...live.values()] : [live.get(target)].filter((e) => e !== undefined)
        return Effect.map(
          Effect.forEach(entries, (e) => (e.stream === undefined ? Effect.succeed(false) : e.stream.offer(notification))),
          (delivered) => delivered.filter(Boolean).length
        )
      })

    const endAll = Effect.suspend(() => Effect.forEach([...live.keys()], end, { discard: true }))

    const endStreams = Effect.suspend(() =>
      Effect.forEach([...live.values()], (e) => (e.stream === undefined ? Effect.void : Effect.asVoid(e.stream.end)), { discard: true })
    )

    return {
      create,
      register,
      discard,
      get,
      end,
      endAll,
      endStreams,
      openStream,
      closeStream,
      notify,
      ids: Effect.sync(() => [...live.keys()])
    }
  })
