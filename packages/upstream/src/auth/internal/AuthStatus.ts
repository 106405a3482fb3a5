/**
 * The token bookkeeping UpstreamAuth needs besides the flow: when a token counts as expired, what
 * a server's token state is for `auth status` and `/v1/status`, and the unauthorized request a
 * login starts from.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as Effect from "effect/Effect"
import type { HttpDefinition } from "../../ServerDefinition.js"
import type { AuthEntry, StoredTokens } from "../TokenStore.js"
import { type Challenge, parseChallenge, requestOptions } from "./OAuthDiscovery.js"
import { scopeList } from "./OAuthFlow.js"

/** The token state of one server, for `auth status` and `/v1/status`. */
export interface AuthStatus {
  readonly server: string
  readonly url: string
  /**
   * valid: a token that has not expired; expired: one that has (refreshed at next use when
   * refreshable); needs-login: `mcpx-fx auth login` is needed; none: the server has not asked.
   */
  readonly state: "valid" | "expired" | "needs-login" | "none"
  readonly issuer?: string
  readonly expiresAt?: number
  readonly scopes?: ReadonlyArray<string>
  readonly refreshable: boolean
  /** Why a login is needed, when it is. */
  readonly reason?: string
}

/** An access token is taken as expired this long before it says, so it does not expire on the way. */
export const ExpirySkewMs = 30_000

/** Whether the access token has expired (or is about to). */
export const isExpired = (tokens: StoredTokens, now: number): boolean => tokens.expires_at !== undefined && tokens.expires_at - ExpirySkewMs <= now

/** The Authorization header for a token. */
export const bearer = (tokens: StoredTokens): string => `Bearer ${tokens.access_token}`

/** The entry without its tokens (revoked or refused), keeping the client registration. */
export const dropTokens = (entry: AuthEntry): AuthEntry => {
  const { tokens: _dropped, ...rest } = entry
  return rest
}

/** The port of a loopback redirect URI, to listen on it again. */
export const portOf = (uri: string | undefined): number | undefined => {
  if (uri === undefined || !URL.canParse(uri)) return undefined
  const port = Number(new URL(uri).port)
  return Number.isInteger(port) && port > 0 ? port : undefined
}

/**
 * A server's token state from its stored entry. `asked` is why a call in this process needed a
 * login; without it, without an entry and without an `auth` block, the server has not asked.
 */
export const statusOf = (
  def: HttpDefinition,
  entry: AuthEntry | undefined,
  context: { readonly damaged: string | undefined; readonly asked: string | undefined; readonly now: number }
): AuthStatus => {
  const { asked, damaged, now } = context
  const tokens = entry?.tokens
  const base = { server: def.name, url: def.url, ...(entry === undefined ? {} : { issuer: entry.issuer }) }
  if (tokens === undefined) {
    const reason = damaged !== undefined ? `the token store was damaged (${damaged})` : asked ?? "no login yet"
    const none = asked === undefined && entry === undefined && def.auth === undefined && damaged === undefined
    return { ...base, state: none ? "none" : "needs-login", refreshable: false, ...(none ? {} : { reason }) }
  }
  const refreshable = tokens.refresh_token !== undefined
  const expired = isExpired(tokens, now)
  const wanted = entry?.wanted
  return {
    ...base,
    state: wanted !== undefined ? "needs-login" : expired ? (refreshable ? "expired" : "needs-login") : "valid",
    ...(tokens.expires_at === undefined ? {} : { expiresAt: tokens.expires_at }),
    scopes: scopeList(tokens.scope),
    refreshable,
    ...(wanted !== undefined
      ? { reason: `the server wants the scopes ${wanted}` }
      : expired && !refreshable
      ? { reason: "the access token expired and there is no refresh token" }
      : {})
  }
}

/**
 * The challenge a login starts from: what the server answers an unauthorized request (a ping,
 * which any server may refuse before reading it). A server that does not say 401 leaves the
 * discovery to the well-known URIs.
 */
export const loginChallenge = (def: HttpDefinition): Effect.Effect<Challenge> =>
  Effect.tryPromise((signal) =>
    fetch(def.url, {
      method: "POST",
      headers: { ...def.headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "mcpx-fx-auth-login", method: Method.Ping }),
      ...requestOptions(def.url, signal)
    })
  ).pipe(
    Effect.flatMap((response) => {
      const header = response.status === 401 ? response.headers.get("www-authenticate") ?? undefined : undefined
      return Effect.zipRight(Effect.promise(() => response.body?.cancel() ?? Promise.resolve()), parseChallenge(header))
    }),
    Effect.orElseSucceed((): Challenge => ({}))
  )
