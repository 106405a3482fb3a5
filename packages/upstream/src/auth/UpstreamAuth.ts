/**
 * Credentials for HTTP upstreams. Static ones are the definition's own `headers` (with `${VAR}`
 * expanded by the config), sent as they are; this service adds OAuth 2.1 as the MCP authorization
 * specification describes it, for every HTTP upstream that has no `Authorization` header of its own
 * (`"auth": {"type": "oauth", …}` only fine-tunes it).
 *
 * The transport asks `credentials(def)` for the `Authorization` header of each request (a stored
 * access token, refreshed when it has expired) and reports each 401, and each 403 whose challenge
 * is `insufficient_scope`, to `refused`, which decides whether the request may be sent again:
 *
 * - 401: another process's newer token is taken up, else the refresh token is used (once per
 *   request), else the flow starts over: protected resource metadata (from the challenge, else the
 *   well-known URIs), the authorization server's metadata (issuer checked), a client identity
 *   (pre-registered, Client ID Metadata Document, or registration), the code grant with PKCE and
 *   `resource`, `iss` checked on the redirect. An authorization server other than the one the
 *   stored client and tokens belong to gets a registration of its own; nothing is reused across.
 * - 403 insufficient_scope: the same, asking for the union of the scopes held and the ones named
 *   (step-up); when that union asks for nothing new, the server will never be satisfied, and the
 *   call fails instead of looping.
 *
 * Only an `Authorizer` can show a person the authorization URL and wait for the redirect. The
 * daemon has none: a call that needs a login fails with `AuthorizationRequired`, which names the
 * `mcpx-fx auth login <server>` command that has one.
 *
 * The errors, and what the transport and an Authorizer are asked, are in AuthModel.ts; the tokens
 * in use in internal/AuthTokens.ts, and what a refusal leads to in internal/Authorizing.ts.
 */
import type { HttpDefinition } from "../ServerDefinition.js"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type AuthError, AuthorizationFailed, type Authorizer, type Credentials } from "./AuthModel.js"
import { type AuthStatus, loginChallenge, statusOf } from "./internal/AuthStatus.js"
import * as AuthTokens from "./internal/AuthTokens.js"
import * as Authorizing from "./internal/Authorizing.js"
import { TokenStore } from "./TokenStore.js"

export type { AuthStatus } from "./internal/AuthStatus.js"

/** How the service authorizes. */
export interface UpstreamAuthOptions {
  /** Completes authorizations; absent (the daemon), a call that needs one fails with AuthorizationRequired. */
  readonly authorizer?: Authorizer
  /** The HTTPS URL of a Client ID Metadata Document describing mcpx-fx, used where servers take one. */
  readonly clientMetadataUrl?: string
}

/** OAuth for HTTP upstreams. */
export class UpstreamAuth extends Context.Tag("@mcpx-fx/upstream/UpstreamAuth")<UpstreamAuth, {
  /** What the transport of `def` asks; undefined for a server whose headers carry their own Authorization. */
  readonly credentials: (def: HttpDefinition) => Credentials | undefined
  /** Authorizes `def` afresh through `authorizer` and stores the tokens (`mcpx-fx auth login`). */
  readonly login: (def: HttpDefinition, authorizer: Authorizer) => Effect.Effect<AuthStatus, AuthError>
  /** Forgets what is stored for `def`; false when nothing was. */
  readonly logout: (def: HttpDefinition) => Effect.Effect<boolean, AuthorizationFailed>
  /** The token state of `def`. */
  readonly status: (def: HttpDefinition) => Effect.Effect<AuthStatus>
}>() {
  /** On the given token store. */
  static readonly layer = (options: UpstreamAuthOptions = {}): Layer.Layer<UpstreamAuth, never, TokenStore> =>
    Layer.effect(UpstreamAuth, Effect.map(TokenStore, (store) => make(store, options)))

  /**
   * No OAuth (tests, embedders that keep no tokens): HTTP upstreams get only their definition's
   * own headers, no server shows an authorization, and a login is refused.
   */
  static readonly none: Layer.Layer<UpstreamAuth> = Layer.succeed(UpstreamAuth, {
    credentials: () => undefined,
    login: (def) => Effect.fail(new AuthorizationFailed({ server: def.name, reason: "this process keeps no OAuth tokens" })),
    logout: () => Effect.succeed(false),
    status: (def) => Effect.succeed({ server: def.name, url: def.url, state: "none", refreshable: false })
  })
}

/** Whether OAuth applies: an HTTP definition whose headers do not already authorize it. */
export const usesOAuth = (def: HttpDefinition): boolean =>
  def.auth?.type === "oauth" || !Object.keys(def.headers).some((k) => k.toLowerCase() === "authorization")

const make = (store: Context.Tag.Service<TokenStore>, options: UpstreamAuthOptions): Context.Tag.Service<UpstreamAuth> => {
  const tokens = AuthTokens.make(store)
  const { authorization, readEntry, ready, states, stateOf, write } = tokens
  const { authorizeWith, refused } = Authorizing.make(tokens, options)

  const status = (def: HttpDefinition): Effect.Effect<AuthStatus> =>
    Effect.gen(function*() {
      const { damaged, entry } = yield* readEntry(def)
      return statusOf(def, entry, { damaged, asked: states.get(def.url)?.needsLogin, now: yield* Clock.currentTimeMillis })
    })

  return UpstreamAuth.of({
    credentials: (def) => {
      if (!usesOAuth(def)) return undefined
      const state = stateOf(def)
      return { authorization: authorization(def, state), ready: (now) => ready(state, now), refused: refused(def, state) }
    },
    login: (def, authorizer) =>
      Effect.gen(function*() {
        const state = stateOf(def)
        const challenge = yield* loginChallenge(def)
        yield* state.lock.withPermits(1)(authorizeWith(def, state, challenge, authorizer, undefined))
        return yield* status(def)
      }),
    logout: (def) =>
      Effect.gen(function*() {
        const state = stateOf(def)
        let had = false
        yield* write(def, (entry) => {
          had = entry !== undefined
          return undefined
        })
        state.tokens = undefined
        state.loadedAt = yield* Clock.currentTimeMillis
        return had
      }),
    status
  })
}
