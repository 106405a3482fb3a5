/**
 * The `/v1` API's own errors, each with its HTTP status (the gateway's and settings' errors are
 * used as they are).
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import type { GatewayCallError, UnknownName } from "./Gateway.js"

/** The upstream refused the tool's arguments (-32602), or they were not a JSON object. */
export class BadArguments extends Schema.TaggedError<BadArguments>("@mcpx-fx/gateway/Api/BadArguments")(
  "BadArguments",
  { tool: Schema.String, detail: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {
  override get message(): string {
    return `${this.tool}: ${this.detail}`
  }
}

/** The call could not be served by the upstream: it failed to start, crashed, timed out or answered an error. */
export class UpstreamFailed extends Schema.TaggedError<UpstreamFailed>("@mcpx-fx/gateway/Api/UpstreamFailed")(
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
