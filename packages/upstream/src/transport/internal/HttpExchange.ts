/**
 * What every exchange of one Streamable HTTP connection shares: the legacy session it is in, the
 * headers each request carries (the definition's, the caller's hints, the session, the token), and
 * the POST, which renews a refused authorization and is sent again.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as Effect from "effect/Effect"
import type { HttpDefinition } from "../../ServerDefinition.js"
import { type RequestHints, SessionExpired } from "../Transport.js"
import { mergeHeaders, type Wire, type WireRequest, type WireResponse } from "../Wire.js"
import type { Credentials } from "../../auth/AuthModel.js"
import { outOfPlace, type WaitingCall } from "./InPlace.js"
import { headerValue } from "./SseHttp.js"

const SessionHeader = "mcp-session-id"
export const VersionHeader = "mcp-protocol-version"
/** What every POST carries besides the definition's, the caller's and the session's headers. */
const PostHeaders = { accept: "application/json, text/event-stream", "content-type": "application/json" }

/** How many times one POST is sent again after its authorization was refused and renewed. */
const MaxAuthRetries = 3

/** The exchanges of a connection to `def` over `wire`, bodies bounded by `maxFrameBytes`, authorized by `auth`. */
export const make = (
  def: HttpDefinition,
  options: { readonly maxFrameBytes: number; readonly auth: Credentials | undefined; readonly wire: Wire }
) =>
  Effect.gen(function*() {
    const { auth, maxFrameBytes, wire } = options
    // Plain cells, not Refs: every POST reads the session and may write both, in place, where a
    // Ref's get and set were effects of every call.
    let session: string | undefined
    // The GET stream and the DELETE have no hints of their own; they carry the version the
    // session's last legacy message named, as 2025-06-18+ servers expect on every request.
    let legacyVersion: string | undefined
    const source = `${def.name} (${def.url})`

    // Modern messages never carry a session id, and initialize starts a session rather than
    // continuing one; everything else carries the session once there is one.
    const sessionFor = (hints: RequestHints | undefined, method: string | undefined): string | undefined =>
      hints?.era === "modern" || method === Method.Initialize ? undefined : session

    const expire = (sid: string) =>
      Effect.suspend(() => {
        if (session === sid) session = undefined
        return Effect.fail(new SessionExpired({ sessionId: sid }))
      })

    // The definition's headers, then the caller's hints, then the session and the token; `extra`
    // (accept, last-event-id, …) last. Trace ids of ours are no business of a third-party server's.
    const baseHeaders = (
      hints: RequestHints | undefined,
      sid: string | undefined,
      authorization: string | undefined,
      extra: Readonly<Record<string, string>>
    ): Record<string, string> => {
      const headers = mergeHeaders(def.headers, hints?.headers, extra)
      if (sid !== undefined) headers[SessionHeader] = sid
      if (authorization !== undefined) headers.authorization = authorization
      return headers
    }

    // GETs and DELETEs carry the token too; only a POST's refusal starts an authorization.
    const currentAuthorization: Effect.Effect<string | undefined> = auth === undefined
      ? Effect.sync(() => undefined)
      : Effect.orElseSucceed(auth.authorization, () => undefined)

    // The token at hand goes at once; reading the store or refreshing is a wait no cut in place
    // ends (internal/InPlace.ts), so a call running in place does it out of place.
    const authorizationOf = (credentials: Credentials) =>
      Effect.clockWith((clock) => {
        const ready = credentials.ready(clock.unsafeCurrentTimeMillis())
        return ready !== undefined ? Effect.succeed(ready.authorization) : outOfPlace(credentials.authorization)
      })

    // A POST of `body` as the request it is: the definition's, the caller's and the session's
    // headers with the token. The version a legacy message names is the session's from then on.
    const postRequest = (
      body: string,
      hints: RequestHints | undefined,
      sid: string | undefined,
      authorization: string | undefined,
      inPlace: WaitingCall | undefined
    ): WireRequest => {
      const version = headerValue(hints?.headers, VersionHeader)
      if (hints?.era !== "modern" && version !== undefined) legacyVersion = version
      return {
        method: "POST",
        url: def.url,
        headers: baseHeaders(hints, sid, authorization, PostHeaders),
        body,
        ...(inPlace === undefined ? {} : { inPlace })
      }
    }

    // An answer that names a session starts it (a legacy server names it in initialize's answer).
    const took = (response: WireResponse): void => {
      const minted = response.headers[SessionHeader]
      if (minted !== undefined && minted.length > 0) session = minted
    }

    // Whether a POST refused as unauthorized goes again, its authorization renewed (its body then
    // read, so the connection is reused). Only what the credentials say may be renewed is.
    const renewed = (response: WireResponse, sent: string | undefined, attempt: number) => {
      if (auth === undefined || (response.status !== 401 && response.status !== 403) || attempt >= MaxAuthRetries) return Effect.succeed(false)
      return Effect.flatMap(
        outOfPlace(auth.refused({ status: response.status, wwwAuthenticate: response.headers["www-authenticate"], sent, attempt })),
        (verdict) => (verdict === "retry" ? Effect.as(Effect.ignore(response.text(maxFrameBytes)), true) : Effect.succeed(false))
      )
    }

    /** The token of a POST, when the connection has credentials. */
    const postAuthorization = auth === undefined ? Effect.succeed(undefined) : authorizationOf(auth)

    // No span of its own: a POST is every call's, and the call's span already covers it. Made once
    // per connection, not per call (docs/performance.md, What a call allocates).
    const post = Effect.fnUntraced(
      function*(body: string, hints: RequestHints | undefined, sid: string | undefined) {
        for (let attempt = 0;; attempt++) {
          const authorization = yield* postAuthorization
          const response = yield* wire.send(postRequest(body, hints, sid, authorization, undefined))
          if (yield* renewed(response, authorization, attempt)) continue
          took(response)
          return response
        }
      }
    )

    // A refused body is read only to find a JSON-RPC message in it; one too large to hold is
    // reported as empty rather than replacing the status the caller needs to see.
    const refusedBody = (response: WireResponse) =>
      response.text(maxFrameBytes).pipe(
        Effect.catchTag("FrameTooLarge", () => Effect.succeed("")),
        Effect.catchTag("TransportClosed", () => Effect.succeed(""))
      )

    return {
      def,
      source,
      maxFrameBytes,
      /** Sends one exchange, tied to the scope it is sent in (closing it unread aborts the exchange). */
      send: wire.send,
      /** Sends one exchange read in place by its reader (Wire.dispatch). */
      dispatch: wire.dispatch,
      /** The legacy session's id, once the server gave one. */
      session: (): string | undefined => session,
      /** The version the session's last legacy message named. */
      legacyVersion: (): string | undefined => legacyVersion,
      sessionFor,
      /** Forgets the session the server no longer knows, failing with SessionExpired. */
      expire,
      baseHeaders,
      currentAuthorization,
      post,
      postRequest,
      postAuthorization,
      took,
      renewed,
      refusedBody
    }
  })

/** The shared state and requests of one connection. */
export type Exchange = Effect.Effect.Success<ReturnType<typeof make>>
