/**
 * The requests a connection is waiting on, when every answer arrives on one shared channel (a
 * stdio process's stdout, the HTTP+SSE GET stream): responses are matched by id, progress by the
 * request's progress token, and everything else is left for the caller to treat as unsolicited.
 *
 * A log message goes to a request when its `_meta.progressToken` ties it to one. Untied, it names
 * no request: it goes to the requests in flight only when those that listen are all one caller's
 * (the rule stdio questions follow, Session.ts), else nowhere here (the session logs it). Handing
 * it to every request in flight gave one caller's logs to every other caller of the process.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import { idOf, isNotification, isResponse } from "@mcpx-fx/protocol/JsonRpc"
import { Keyed } from "@mcpx-fx/cancel/InFlight"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { TransportError } from "../Transport.js"

/**
 * Where one request's messages go: its tied notifications, then its response. A Mailbox is one
 * (read as a Stream); a stdio call waits on a lighter one (CallBox.ts).
 */
export interface Box {
  readonly unsafeOffer: (parsed: JsonRpc.Parsed) => boolean
  readonly unsafeDone: (exit: Exit.Exit<void, TransportError>) => boolean
}

/**
 * What a request is waited on by: its id (or progress token) itself. JSON-RPC ids are strings or
 * numbers, and `1` and `"1"` are different ids, as they are different keys of a `Keyed`;
 * a string built of type and value per lookup was garbage, several times per call.
 */
export type Key = JsonRpc.RequestId

/** The key of a request id. */
export const idKey = (id: JsonRpc.RequestId): Key => id

/** The key of a progress token, when the value is one. */
export const tokenKey = (token: unknown): Key | undefined => typeof token === "string" || typeof token === "number" ? token : undefined

/** A request opts into progress with `_meta.progressToken`; the notifications name it at top level. */
export const requestProgressKey = (params: JsonRpc.Request["params"]): Key | undefined => {
  const meta = params?._meta
  return typeof meta === "object" && meta !== null ? tokenKey((meta as Record<string, unknown>).progressToken) : undefined
}

/** The waiting requests of one connection. */
export interface Waiting {
  readonly pending: Keyed<Box>
  readonly progress: Keyed<Box>
  /** The caller of each pending request that listens (`RequestHints.caller`), by the request's key. */
  readonly callers: Keyed<unknown>
  /** Delivers a message to the request it belongs to; false when it belongs to none. */
  readonly route: (parsed: JsonRpc.Parsed) => Effect.Effect<boolean>
  /** `route`, done in place: a reader handling many lines at once needs no Effect per line. */
  readonly unsafeRoute: (parsed: JsonRpc.Parsed) => boolean
  /** Fails every waiting request with the reason the connection closed, and forgets them. */
  readonly failAll: (reason: TransportError) => Effect.Effect<void>
}

/** An empty set of waiting requests. */
export const make = (): Waiting => {
  // Not Maps: a connection's tables live long and churn once per call (@mcpx-fx/cancel/InFlight).
  const pending = new Keyed<Box>()
  const progress = new Keyed<Box>()
  const callers = new Keyed<unknown>()
  // The one caller whose requests listen, when there is exactly one.
  const soleCaller = (): { readonly caller: unknown } | undefined => {
    let found: { readonly caller: unknown } | undefined
    for (const caller of callers.values()) {
      if (found === undefined) found = { caller }
      else if (found.caller !== caller) return undefined
    }
    return found
  }
  const unsafeRoute = (parsed: JsonRpc.Parsed): boolean => {
    const m = parsed.message
    if (isResponse(m)) {
      const id = idOf(m)
      const box = id === undefined ? undefined : pending.get(id)
      if (id === undefined || box === undefined) return false
      pending.delete(id)
      callers.delete(id)
      box.unsafeOffer(parsed)
      box.unsafeDone(Exit.void)
      return true
    }
    if (isNotification(m) && m.method === Method.NotificationsProgress) {
      const token = tokenKey(m.params?.progressToken)
      const box = token === undefined ? undefined : progress.get(token)
      if (box === undefined) return false
      box.unsafeOffer(parsed)
      return true
    }
    if (isNotification(m) && m.method === Method.NotificationsMessage) {
      const tied = progress.size > 0 ? progress.get(requestProgressKey(m.params) ?? "") : undefined
      if (tied !== undefined) {
        tied.unsafeOffer(parsed)
        return true
      }
      const sole = soleCaller()
      if (sole === undefined) return false
      for (const [key, caller] of callers) if (caller === sole.caller) pending.get(key)?.unsafeOffer(parsed)
      return true
    }
    return false
  }
  return {
    pending,
    progress,
    callers,
    route: (parsed) => Effect.sync(() => unsafeRoute(parsed)),
    unsafeRoute,
    failAll: (reason) =>
      Effect.sync(() => {
        for (const box of pending.values()) box.unsafeDone(Exit.fail(reason))
        pending.clear()
        progress.clear()
        callers.clear()
      })
  }
}
