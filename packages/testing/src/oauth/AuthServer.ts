/**
 * A minimal OAuth 2.1 authorization server on 127.0.0.1 for tests: RFC 8414 metadata, dynamic
 * client registration, an authorization endpoint that approves at once (redirecting with the code,
 * `state` and `iss`), and a token endpoint for the code (PKCE S256 checked) and refresh grants,
 * refresh tokens rotated. Tests can revoke refresh tokens, invalidate access tokens and read what
 * was asked of it; a protected resource (ProtectedServer.ts) asks it whether a token is good.
 */
import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** What the server was asked, in order. */
export type AuthEvent =
  | { readonly kind: "metadata" }
  | { readonly kind: "register"; readonly clientId: string; readonly redirectUris: ReadonlyArray<string> }
  | { readonly kind: "authorize"; readonly clientId: string; readonly scope: string | undefined; readonly resource: string | undefined }
  | { readonly kind: "token"; readonly grantType: string; readonly clientId: string | undefined; readonly ok: boolean }

export interface AuthServerOptions {
  /** Access token lifetime (expires_in), seconds (default 3600). */
  readonly tokenLifetimeSeconds?: number
  /** Scopes listed in the metadata (none by default). */
  readonly scopesSupported?: ReadonlyArray<string>
  /** Scopes it is willing to grant; others asked for are left out of the grant (default: every scope asked for). */
  readonly grantable?: ReadonlyArray<string>
}

/** The token's grant, as the protected resource sees it. */
export interface Grant {
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
  readonly resource: string | undefined
}

export interface AuthServer {
  readonly issuer: string
  readonly events: ReadonlyArray<AuthEvent>
  /** The grant of an access token this server issued and still honours. */
  readonly verify: (accessToken: string) => Grant | undefined
  /** Every refresh token stops working (the user revoked the grant). */
  readonly revokeRefreshTokens: () => void
  /** Every access token issued so far stops working (as if expired), refresh tokens still do. */
  readonly invalidateAccessTokens: () => void
  readonly close: () => Promise<void>
}

const random = () => randomBytes(16).toString("base64url")

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body))

const readText = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const readForm = (req: IncomingMessage): Promise<URLSearchParams> => readText(req).then((t) => new URLSearchParams(t))

const readJson = (req: IncomingMessage): Promise<unknown> => readText(req).then((t) => JSON.parse(t) as unknown).catch(() => ({}))

// Loopback redirect URIs match whatever the port (RFC 8252 §7.3).
const sameRedirect = (registered: string, given: string): boolean => {
  try {
    const a = new URL(registered)
    const b = new URL(given)
    return a.protocol === b.protocol && a.hostname === b.hostname && a.pathname === b.pathname
  } catch {
    return false
  }
}

/** Starts the server on an ephemeral loopback port. */
export const startAuthServer = async (options: AuthServerOptions = {}): Promise<AuthServer> => {
  const events: Array<AuthEvent> = []
  const clients = new Map<string, ReadonlyArray<string>>()
  const codes = new Map<string, { clientId: string; challenge: string; redirectUri: string; scope: string | undefined; resource: string | undefined }>()
  const access = new Map<string, Grant>()
  const refresh = new Map<string, Grant>()
  const lifetime = options.tokenLifetimeSeconds ?? 3600
  let issuer = ""

  const issue = (grant: Grant) => {
    const accessToken = `at-${random()}`
    const refreshToken = `rt-${random()}`
    access.set(accessToken, grant)
    refresh.set(refreshToken, grant)
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: lifetime,
      refresh_token: refreshToken,
      ...(grant.scopes.length > 0 ? { scope: grant.scopes.join(" ") } : {})
    }
  }

  const token = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req)
    const grantType = form.get("grant_type") ?? ""
    const clientId = form.get("client_id") ?? undefined
    const refuse = (error: string) => {
      events.push({ kind: "token", grantType, clientId, ok: false })
      json(res, 400, { error })
    }
    if (grantType === "authorization_code") {
      const code = codes.get(form.get("code") ?? "")
      codes.delete(form.get("code") ?? "")
      const verifier = form.get("code_verifier") ?? ""
      const challenge = createHash("sha256").update(verifier).digest("base64url")
      if (code === undefined || code.clientId !== clientId || code.challenge !== challenge || code.redirectUri !== form.get("redirect_uri")) {
        return refuse("invalid_grant")
      }
      events.push({ kind: "token", grantType, clientId, ok: true })
      const asked = (code.scope ?? "").split(" ").filter(Boolean)
      const scopes = options.grantable === undefined ? asked : asked.filter((s) => options.grantable!.includes(s))
      return json(res, 200, issue({ clientId: code.clientId, scopes, resource: code.resource }))
    }
    if (grantType === "refresh_token") {
      const old = form.get("refresh_token") ?? ""
      const grant = refresh.get(old)
      if (grant === undefined || grant.clientId !== clientId) return refuse("invalid_grant")
      // Rotation: the refresh token just used is spent.
      refresh.delete(old)
      events.push({ kind: "token", grantType, clientId, ok: true })
      return json(res, 200, issue(grant))
    }
    return refuse("unsupported_grant_type")
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", issuer)
    const route = `${req.method} ${url.pathname}`
    const handle = async () => {
      switch (route) {
        case "GET /.well-known/oauth-authorization-server":
          events.push({ kind: "metadata" })
          return json(res, 200, {
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            registration_endpoint: `${issuer}/register`,
            response_types_supported: ["code"],
            grant_types_supported: ["authorization_code", "refresh_token"],
            code_challenge_methods_supported: ["S256"],
            token_endpoint_auth_methods_supported: ["none"],
            authorization_response_iss_parameter_supported: true,
            ...(options.scopesSupported === undefined ? {} : { scopes_supported: options.scopesSupported })
          })
        case "POST /register": {
          const body = (await readJson(req)) as { readonly redirect_uris?: ReadonlyArray<string> }
          const clientId = `client-${random()}`
          const redirectUris = body.redirect_uris ?? []
          clients.set(clientId, redirectUris)
          events.push({ kind: "register", clientId, redirectUris })
          return json(res, 201, { client_id: clientId, redirect_uris: redirectUris, token_endpoint_auth_method: "none" })
        }
        case "GET /authorize": {
          const q = url.searchParams
          const clientId = q.get("client_id") ?? ""
          const redirectUri = q.get("redirect_uri") ?? ""
          const registered = clients.get(clientId)
          if (registered === undefined || !registered.some((r) => sameRedirect(r, redirectUri))) {
            return json(res, 400, { error: "invalid_request", error_description: "unknown client or redirect_uri" })
          }
          if (q.get("code_challenge_method") !== "S256" || q.get("code_challenge") === null) {
            return json(res, 400, { error: "invalid_request", error_description: "PKCE S256 is required" })
          }
          const scope = q.get("scope") ?? undefined
          const resource = q.get("resource") ?? undefined
          events.push({ kind: "authorize", clientId, scope, resource })
          const code = random()
          codes.set(code, { clientId, challenge: q.get("code_challenge")!, redirectUri, scope, resource })
          const back = new URL(redirectUri)
          back.searchParams.set("code", code)
          back.searchParams.set("iss", issuer)
          const state = q.get("state")
          if (state !== null) back.searchParams.set("state", state)
          res.writeHead(302, { location: back.href }).end()
          return
        }
        case "POST /token":
          return token(req, res)
        default:
          return json(res, 404, { error: "not_found" })
      }
    }
    handle().catch(() => json(res, 500, { error: "server_error" }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuer,
    events,
    verify: (t) => access.get(t),
    revokeRefreshTokens: () => refresh.clear(),
    invalidateAccessTokens: () => access.clear(),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
