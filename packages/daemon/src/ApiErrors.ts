/**
 * The `/v1` API's own errors, each with its HTTP status (the gateway's and settings' errors are
 * used as they are).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { GatewayCallError, UnknownName } from "@mcpx-fx/gateway/GatewayModel"

/**
 * The tool's arguments are not a JSON object, do not fit its inputSchema (ArgumentCheck.ts), or the
 * upstream refused them (-32602).
 */
export class BadArguments extends Schema.TaggedError<BadArguments>("@mcpx-fx/daemon/Api/BadArguments")(
  "BadArguments",
  {
    tool: Schema.String,
    detail: Schema.String,
    /** The argument that does not fit (`query`, `filter.state`), when the schema check names one. */
    field: Schema.optionalWith(Schema.String, { exact: true })
  },
  HttpApiSchema.annotations({ status: 400 })
) {
  override get message(): string {
    return `${this.tool}: ${this.detail}`
  }
}

/** The call could not be served by the upstream: it failed to start, crashed, timed out or answered an error. */
export class UpstreamFailed extends Schema.TaggedError<UpstreamFailed>("@mcpx-fx/daemon/Api/UpstreamFailed")(
  "UpstreamFailed",
  {
    /**
     * The gateway's error tag: PoolError, CallTimedOut, UpstreamRpcError, ProbeFailed, …, and
     * AuthorizationRequired when the server needs `mcpx-fx auth login` (the CLI exits 77).
     */
    kind: Schema.String,
    server: Schema.optionalWith(Schema.String, { exact: true }),
    detail: Schema.String,
    /** The upstream's JSON-RPC error, when it answered with one. */
    code: Schema.optionalWith(Schema.Number, { exact: true }),
    data: Schema.optionalWith(Schema.Unknown, { exact: true })
  },
  HttpApiSchema.annotations({ status: 502 })
) {
  override get message(): string {
    return this.detail
  }
}

/** A gateway failure other than an unknown name, as `/v1` reports it (502, naming the server and the upstream's error). */
export const upstreamFailed = (e: Exclude<GatewayCallError, UnknownName>): UpstreamFailed => {
  const server = "server" in e && typeof e.server === "string" ? { server: e.server } : {}
  const rpc = e._tag === "UpstreamRpcError" ? { code: e.code, ...(e.data !== undefined ? { data: e.data } : {}) } : {}
  // A start that failed for want of a login is told as what it is, so callers can say `auth login`.
  const kind = e._tag === "PoolError" && e.authorizationRequired === true ? "AuthorizationRequired" : e._tag
  return new UpstreamFailed({ kind, detail: e.message, ...server, ...rpc })
}

const tagOf = (e: unknown): string | undefined => typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" ? e._tag : undefined

const jsonError = (status: number, tag: string, message: string, more: Record<string, unknown> = {}) =>
  HttpServerResponse.unsafeJson({ _tag: tag, message, ...more }, { status })

/**
 * Every 4xx of `/v1` with a JSON body, as the API's own errors have: the platform answers a route
 * it does not know (404) and a body it cannot read as JSON (400) with an empty one, which a
 * program cannot tell from a broken proxy. The API's typed errors pass through to be encoded.
 */
export const jsonClientErrors = HttpApiBuilder.middleware((app) =>
  app.pipe(
    Effect.catchAllCause((cause) => {
      // The platform's own request errors arrive as defects, the API's typed errors as failures.
      const failure: unknown = Cause.squash(cause)
      switch (tagOf(failure)) {
        case "RouteNotFound":
          return Effect.succeed(jsonError(404, "NotFound", "no such /v1 route (GET /v1/openapi.json lists them)"))
        case "RequestError": {
          const reason = typeof failure === "object" && failure !== null && "cause" in failure && failure.cause instanceof Error
            ? `: ${failure.cause.message}`
            : ""
          // The shape of the platform's own decode error, so its clients read this one too.
          return Effect.succeed(jsonError(400, "HttpApiDecodeError", `the request body is not JSON${reason}`, { issues: [] }))
        }
        default:
          return Effect.failCause(cause)
      }
    }),
    Effect.map((response) =>
      response.status >= 400 && response.status < 500 && response.body._tag === "Empty"
        ? jsonError(response.status, "ClientError", `HTTP ${response.status}`)
        : response
    )
  )
)
