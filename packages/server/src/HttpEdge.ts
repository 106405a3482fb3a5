/**
 * What every request to the daemon's TCP listener passes before any route sees it — `/mcp`, `/v1`
 * and anything else alike, on every method:
 *
 * 1. Host: the request must name the daemon by one of its own addresses (internal/HttpHostName),
 *    which is what defeats DNS rebinding; else 403.
 * 2. Origin: a present Origin must be allowed (internal/HttpOrigin); else 403. A request a browser
 *    says another site's page made (`Sec-Fetch-Site: cross-site`) must come from an origin in
 *    `transport.allowedOrigins` even when it carries no Origin: an `<img>`'s GET carries none, and
 *    any page can make one.
 * 3. CORS: a preflight (OPTIONS) from an origin in `transport.allowedOrigins` is granted the
 *    methods and headers MCP and `/v1` use; replies to such an origin carry
 *    `Access-Control-Allow-Origin` and expose the MCP headers. Any other origin is granted nothing.
 * 4. Token: with `daemon.token`, every request but a preflight needs `Authorization: Bearer
 *    <token>`; else 401 with `WWW-Authenticate: Bearer`.
 *
 * Refusals on `/mcp` carry an id-less JSON-RPC error, elsewhere `{error, message}`. The unix
 * socket is not behind this: no browser reaches it, and only its owner can open it.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as HeaderCodec from "@mcpx-fx/protocol/HeaderCodec"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { makeHostPolicy } from "./internal/HttpHostName.js"
import { makeOriginPolicy } from "./internal/HttpOrigin.js"
import * as Wire from "./internal/HttpWire.js"

/** The policy's inputs. */
export interface EdgeOptions {
  /** The port the listener got: the daemon's own names count only at it. */
  readonly port: number
  /** The daemon's own host names beyond the loopback ones: the bound address, or every local one for a wildcard bind. */
  readonly ownHosts: ReadonlyArray<string>
  /** `transport.allowedHosts`: `name` (any port) or `name:port`. */
  readonly allowedHosts: ReadonlyArray<string>
  /** The daemon's own origins, e.g. `http://127.0.0.1:7717`. */
  readonly ownOrigins: ReadonlyArray<string>
  /** `transport.allowedOrigins`: the only origins granted CORS. */
  readonly allowedOrigins: ReadonlyArray<string>
  /** `daemon.token`: when set, the bearer token every request must carry. */
  readonly token?: string | undefined
}

const AllowMethods = "GET, POST, PUT, DELETE, OPTIONS"

/** What a browser page may send: the MCP headers, the API's, and the bearer token. */
const AllowHeaders = [
  "accept",
  "authorization",
  "content-type",
  "last-event-id",
  HeaderCodec.ProtocolVersionHeader,
  HeaderCodec.MethodHeader,
  HeaderCodec.NameHeader,
  HeaderCodec.SessionIdHeader,
  "x-mcpx-caller-protocol"
].map((h) => h.toLowerCase())

/** What a page may read off a reply. */
const ExposeHeaders = [HeaderCodec.SessionIdHeader, HeaderCodec.ProtocolVersionHeader, "WWW-Authenticate", "Retry-After"].join(", ")

/** The requested headers a preflight is granted: the fixed list, and any `Mcp-Param-*`. */
const grantedHeaders = (requested: string | undefined): string => {
  const extra = (requested ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => /^mcp-param-[a-z0-9-]+$/.test(h))
  return [...new Set([...AllowHeaders, ...extra])].join(", ")
}

const digest = (s: string): Buffer => createHash("sha256").update(s).digest()

/** Whether an Authorization header carries the token; compared in constant time. */
const bearerMatches = (expected: Buffer, header: string | undefined): boolean => {
  const m = header === undefined ? null : /^\s*bearer\s+(\S+)\s*$/i.exec(header)
  return m !== null && m[1] !== undefined && timingSafeEqual(digest(m[1]), expected)
}

const isMcp = (path: string) => path === "/mcp" || path.startsWith("/mcp/")

/** Wraps `app` in the policy. */
export const make = (options: EdgeOptions) => {
  const hosts = makeHostPolicy(options)
  const origins = makeOriginPolicy({ ownOrigins: options.ownOrigins, allowedOrigins: options.allowedOrigins })
  const token = options.token === undefined || options.token === "" ? undefined : digest(options.token)

  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Wire.withRequest((request) => {
      const path = request.url.split("?")[0] ?? ""
      const refuse = (status: number, error: string, message: string, headers: Record<string, string> = {}) =>
        Effect.succeed(
          isMcp(path)
            ? Wire.refuse(status, ErrorCode.InvalidRequest, `${error}: ${message}`, { headers })
            : HttpServerResponse.unsafeJson({ error: error.toLowerCase(), message }, { status, headers })
        )
      const host = Wire.header(request, "host")
      if (!hosts.allows(host)) {
        return refuse(
          403,
          "Forbidden",
          `Host ${JSON.stringify(host ?? "")} is not this daemon's address; a name that should reach it goes in transport.allowedHosts`
        )
      }
      const origin = Wire.header(request, "origin")
      if (!origins.allows(origin)) return refuse(403, "Forbidden", "Origin not allowed")
      const cors = origins.corsOrigin(origin)
      if (cors === undefined && Wire.header(request, "sec-fetch-site")?.trim().toLowerCase() === "cross-site") {
        return refuse(403, "Forbidden", "a request from another site's page needs its origin in transport.allowedOrigins")
      }
      const grant: Record<string, string> = cors === undefined
        ? {}
        : { "access-control-allow-origin": cors, "access-control-expose-headers": ExposeHeaders, vary: "Origin" }
      if (request.method === "OPTIONS") {
        const preflight = cors === undefined ? {} : {
          ...grant,
          "access-control-allow-methods": AllowMethods,
          "access-control-allow-headers": grantedHeaders(Wire.header(request, "access-control-request-headers")),
          "access-control-max-age": "600"
        }
        return Effect.succeed(HttpServerResponse.empty({ status: 204, headers: { allow: AllowMethods, ...preflight } }))
      }
      if (token !== undefined && !bearerMatches(token, Wire.header(request, "authorization"))) {
        return refuse(401, "Unauthorized", "this daemon needs Authorization: Bearer <daemon.token>", {
          ...grant,
          "www-authenticate": "Bearer realm=\"mcpx-fx\""
        })
      }
      return cors === undefined ? app : Effect.map(app, (response) => HttpServerResponse.setHeaders(response, grant))
    })
}
