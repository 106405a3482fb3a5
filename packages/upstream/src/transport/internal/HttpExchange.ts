/**
 * What every exchange of one Streamable HTTP connection shares: the legacy session it is in, the
 * headers each request carries (the definition's, the caller's hints, the session, the token), and
 * the POST, which renews a refused authorization and is sent again.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { HttpDefinition } from "../../ServerDefinition.js"
import { type RequestHints, SessionExpired } from "../Transport.js"
import type { Credentials } from "../../auth/AuthModel.js"
import { headerValue, readBody, unreachable } from "./SseHttp.js"

const SessionHeader = "mcp-session-id"
export const VersionHeader = "mcp-protocol-version"
const AcceptBoth = "application/json, text/event-stream"

/** How many times one POST is sent again after its authorization was refused and renewed. */
const MaxAuthRetries = 3

/** The exchanges of a connection to `def`, bodies bounded by `maxFrameBytes`, authorized by `auth`. */
export const make = (
  def: HttpDefinition,
  options: { readonly maxFrameBytes: number; readonly auth: Credentials | undefined }
) =>
  Effect.gen(function*() {
    const { auth, maxFrameBytes } = options
    // Trace ids of ours are no business of a third-party server's, so none are propagated.
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerPropagation(false))
    // Tying each exchange to a scope is what aborts a POST when its request stream is interrupted.
    const scoped = HttpClient.withScope(client)
    const session = yield* Ref.make<string | undefined>(undefined)
    // The GET stream and the DELETE have no hints of their own; they carry the version the
    // session's last legacy message named, as 2025-06-18+ servers expect on every request.
    const legacyVersion = yield* Ref.make<string | undefined>(undefined)
    const source = `${def.name} (${def.url})`

    // Modern messages never carry a session id, and initialize starts a session rather than
    // continuing one; everything else carries the session once there is one.
    const sessionFor = (hints: RequestHints | undefined, method: string | undefined) =>
      Effect.map(Ref.get(session), (sid) => (hints?.era === "modern" || method === Method.Initialize ? undefined : sid))

    const expire = (sid: string) =>
      Effect.zipRight(
        Ref.update(session, (current) => (current === sid ? undefined : current)),
        Effect.fail(new SessionExpired({ sessionId: sid }))
      )

    const baseRequest = (
      request: HttpClientRequest.HttpClientRequest,
      hints: RequestHints | undefined,
      sid: string | undefined,
      authorization?: string | undefined
    ) =>
      request.pipe(
        HttpClientRequest.setHeaders(def.headers),
        HttpClientRequest.setHeaders(hints?.headers ?? {}),
        sid === undefined ? (r) => r : HttpClientRequest.setHeader(SessionHeader, sid),
        authorization === undefined ? (r) => r : HttpClientRequest.setHeader("authorization", authorization)
      )

    // GETs and DELETEs carry the token too; only a POST's refusal starts an authorization.
    const currentAuthorization: Effect.Effect<string | undefined> = auth === undefined
      ? Effect.sync(() => undefined)
      : Effect.orElseSucceed(auth.authorization, () => undefined)

    const post = Effect.fn("HttpTransport.post")(function*(
      body: string,
      hints: RequestHints | undefined,
      sid: string | undefined
    ) {
      const version = headerValue(hints?.headers, VersionHeader)
      if (hints?.era !== "modern" && version !== undefined) yield* Ref.set(legacyVersion, version)
      for (let attempt = 0;; attempt++) {
        const authorization = auth === undefined ? undefined : yield* auth.authorization
        const request = baseRequest(HttpClientRequest.post(def.url), hints, sid, authorization).pipe(
          HttpClientRequest.setHeader("accept", AcceptBoth),
          HttpClientRequest.bodyText(body, "application/json")
        )
        const response = yield* scoped.execute(request).pipe(Effect.mapError((e) => unreachable(def.url, e)))
        if (auth !== undefined && (response.status === 401 || response.status === 403) && attempt < MaxAuthRetries) {
          const verdict = yield* auth.refused({
            status: response.status,
            wwwAuthenticate: response.headers["www-authenticate"],
            sent: authorization,
            attempt
          })
          if (verdict === "retry") {
            yield* Effect.ignore(readBody(def.url, response, maxFrameBytes))
            continue
          }
        }
        const minted = response.headers[SessionHeader]
        if (minted !== undefined && minted.length > 0) yield* Ref.set(session, minted)
        return response
      }
    })

    // A refused body is read only to find a JSON-RPC message in it; one too large to hold is
    // reported as empty rather than replacing the status the caller needs to see.
    const refusedBody = (response: HttpClientResponse.HttpClientResponse) =>
      readBody(def.url, response, maxFrameBytes).pipe(
        Effect.catchTag("FrameTooLarge", () => Effect.succeed("")),
        Effect.catchTag("TransportClosed", () => Effect.succeed(""))
      )

    return {
      def,
      source,
      maxFrameBytes,
      /** The client whose every exchange is tied to a scope. */
      scoped,
      session,
      legacyVersion,
      sessionFor,
      /** Forgets the session the server no longer knows, failing with SessionExpired. */
      expire,
      baseRequest,
      currentAuthorization,
      post,
      refusedBody
    }
  })

/** The shared state and requests of one connection. */
export type Exchange = Effect.Effect.Success<ReturnType<typeof make>>
