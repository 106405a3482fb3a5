/**
 * The legacy Streamable HTTP sessions of `/mcp` (2025-03-26 … 2025-11-25): minted by `initialize`,
 * ended by DELETE, by the idle timeout or by shutdown, each with its own Server connection, its own
 * requests (so `notifications/cancelled` can reach them) and at most one GET notification stream.
 *
 * A session's requests and its GET stream live in the session's scope, not in the HTTP request
 * that started them: the legacy revisions say a dropped connection is not a cancellation, so only
 * `notifications/cancelled` and the end of the session stop them.
 */
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { randomBytes } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as Mailbox from "effect/Mailbox"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { type Connection, makeConnection } from "../Server.js"
import * as Subscriptions from "../Subscriptions.js"

/** One legacy session. */
export interface Session {
  readonly id: string
  readonly connection: Connection
  /** The session's requests in flight, by JSON-RPC id. */
  readonly requests: FiberMap.FiberMap<JsonRpc.RequestId, JsonRpc.Response | undefined>
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

/** The session registry. */
export interface Sessions {
  /** A new session that is not reachable until `register`ed (its `initialize` may still fail). */
  readonly create: Effect.Effect<Session>
  readonly register: (session: Session) => Effect.Effect<void>
  /** Discards a session that was never registered. */
  readonly discard: (session: Session) => Effect.Effect<void>
  /** A live session by id (undefined if unknown or ended); counts as activity. */
  readonly get: (id: string) => Effect.Effect<Session | undefined>
  /** Ends a session: its requests are interrupted, its GET stream closes. False if unknown. */
  readonly end: (id: string) => Effect.Effect<boolean>
  readonly endAll: Effect.Effect<void>
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
 * The registry, owned by `scope`. With `idleTimeout`, a session that has seen no request, has no
 * request in flight and no GET stream open for that long is ended.
 */
export const makeSessions = (
  scope: Scope.Scope,
  idleTimeout: Duration.DurationInput | undefined
): Effect.Effect<Sessions> =>
  Effect.sync(() => {
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

    const busy = (entry: Entry): Effect.Effect<boolean> =>
      entry.stream !== undefined ? Effect.succeed(true) : Effect.map(FiberMap.size(entry.session.requests), (n) => n > 0)

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

    const create: Effect.Effect<Session> = Effect.gen(function*() {
      const id = mintId()
      const sessionScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      const connection = yield* makeConnection(id)
      const requests = yield* Scope.extend(FiberMap.make<JsonRpc.RequestId, JsonRpc.Response | undefined>(), sessionScope)
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
        return Effect.as(Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(entry.lastSeen, now)), entry.session)
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
          // The idle clock starts when the client stops listening, not when it last posted.
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

    return {
      create,
      register,
      discard,
      get,
      end,
      endAll,
      openStream,
      closeStream,
      notify,
      ids: Effect.sync(() => [...live.keys()])
    }
  })
