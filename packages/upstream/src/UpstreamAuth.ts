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
 */
import type { HttpDefinition } from "./ServerDefinition.js"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as oauth from "oauth4webapi"
import {
  type Challenge,
  discoverResource,
  discoverServer,
  OAuthStepFailed,
  parseChallenge
} from "./internal/OAuthDiscovery.js"
import {
  type AuthStatus,
  bearer,
  dropTokens,
  isExpired,
  loginChallenge,
  portOf,
  statusOf
} from "./internal/AuthStatus.js"
import * as Flow from "./internal/OAuthFlow.js"
import { type AuthEntry, type StoredTokens, TokenStore } from "./TokenStore.js"

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The call needs a login that has not happened (or no longer holds): `mcpx-fx auth login <server>`. */
export class AuthorizationRequired extends Schema.TaggedError<AuthorizationRequired>("@mcpx-fx/upstream/AuthorizationRequired")(
  "AuthorizationRequired",
  {
    server: Schema.String,
    url: Schema.String,
    reason: Schema.String,
    /** The scopes the server asked for, when a login must ask for more than before. */
    scope: Schema.optionalWith(Schema.String, { exact: true })
  }
) {
  override get message(): string {
    return `${this.server} needs authorization (${this.reason}); run \`mcpx-fx auth login ${this.server}\``
  }
}

/** Authorizing failed: discovery, registration, the redirect or the token endpoint said no. */
export class AuthorizationFailed extends Schema.TaggedError<AuthorizationFailed>("@mcpx-fx/upstream/AuthorizationFailed")(
  "AuthorizationFailed",
  { server: Schema.String, reason: Schema.String }
) {
  override get message(): string {
    return `authorizing at ${this.server} failed: ${this.reason}`
  }
}

/** What authorizing can fail with. */
export type AuthError = AuthorizationRequired | AuthorizationFailed

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

/** A refused request, as the transport saw it. */
export interface Refusal {
  readonly status: number
  readonly wwwAuthenticate: string | undefined
  /** The Authorization header the request carried, if any. */
  readonly sent: string | undefined
  /** How many refusals this request has already had (0 for the first). */
  readonly attempt: number
}

/** What the transport of one definition asks. */
export interface Credentials {
  /** The Authorization header for the next request, if there is a token to send. */
  readonly authorization: Effect.Effect<string | undefined, AuthError>
  /** A 401 or 403: "retry" once a new request may succeed, "pass" when this is no authorization matter. */
  readonly refused: (refusal: Refusal) => Effect.Effect<"retry" | "pass", AuthError>
}

/** Where the authorization server sends the browser back, and the wait for it. */
export interface Receiver {
  readonly redirectUri: string
  /** Shows the authorization URL to whoever approves it; the full redirect URL once it arrives. */
  readonly complete: (authorizationUrl: URL) => Effect.Effect<URL, AuthorizationFailed>
}

/** Completes authorizations interactively: a loopback listener and a person, or a test's user agent. */
export interface Authorizer {
  /** Opens the redirect target, on `preferredPort` when given and free. */
  readonly receive: (server: string, preferredPort: number | undefined) => Effect.Effect<Receiver, AuthorizationFailed, Scope.Scope>
}

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
}

/** Whether OAuth applies: an HTTP definition whose headers do not already authorize it. */
export const usesOAuth = (def: HttpDefinition): boolean =>
  def.auth?.type === "oauth" || !Object.keys(def.headers).some((k) => k.toLowerCase() === "authorization")

/**
 * How long tokens read from the store are used before it is read again, so a login, refresh or
 * logout by another process (the CLI beside the daemon) is seen within this long even when the
 * server does not refuse the old token first.
 */
const ReloadAfterMs = 30_000

interface ServerState {
  /** The tokens in use; read from the store on first use and every ReloadAfterMs. */
  tokens: StoredTokens | undefined
  /** When the store was last read for them (undefined: never). */
  loadedAt: number | undefined
  /** Why the last call needed a login nobody could do here; cleared by the next authorization. */
  needsLogin: string | undefined
  /** One refresh or authorization at a time per server. */
  readonly lock: Effect.Semaphore
}

const asServer = (entry: AuthEntry): oauth.AuthorizationServer => entry.metadata as unknown as oauth.AuthorizationServer

const make = (store: Context.Tag.Service<TokenStore>, options: UpstreamAuthOptions): Context.Tag.Service<UpstreamAuth> => {
  const states = new Map<string, ServerState>()
  const stateOf = (def: HttpDefinition): ServerState => {
    let state = states.get(def.url)
    if (state === undefined) {
      state = { tokens: undefined, loadedAt: undefined, needsLogin: undefined, lock: Effect.unsafeMakeSemaphore(1) }
      states.set(def.url, state)
    }
    return state
  }

  const failed = (def: HttpDefinition) => (e: OAuthStepFailed | { readonly message: string }) =>
    new AuthorizationFailed({ server: def.name, reason: e.message })

  const required = (def: HttpDefinition, reason: string, scope?: string) =>
    new AuthorizationRequired({ server: def.name, url: def.url, reason, ...(scope === undefined ? {} : { scope }) })

  const readEntry = (def: HttpDefinition) =>
    Effect.map(store.read, (snapshot) => ({ entry: snapshot.servers.get(def.url), damaged: snapshot.damaged }))

  const write = (def: HttpDefinition, change: (entry: AuthEntry | undefined) => AuthEntry | undefined) =>
    store.update(def.url, change).pipe(Effect.mapError((e) => new AuthorizationFailed({ server: def.name, reason: e.message })))

  const load = (def: HttpDefinition, state: ServerState, now: number) =>
    state.loadedAt !== undefined && now - state.loadedAt < ReloadAfterMs
      ? Effect.void
      : Effect.map(readEntry(def), ({ entry }) => {
        state.tokens = entry?.tokens
        state.loadedAt = now
      })

  /** Refreshes with the stored refresh token; undefined when there is none or it was refused (revoked). */
  const refreshFrom = (def: HttpDefinition, state: ServerState, entry: AuthEntry) =>
    Effect.gen(function*() {
      const tokens = entry.tokens
      const client = entry.client
      if (tokens?.refresh_token === undefined || client === undefined) return undefined
      const now = yield* Clock.currentTimeMillis
      const refreshed = yield* Flow.refresh({
        as: asServer(entry),
        client,
        tokens: { ...tokens, refresh_token: tokens.refresh_token },
        resource: entry.resource,
        now
      }).pipe(Effect.either)
      if (refreshed._tag === "Left") {
        const e = refreshed.left
        // The grant was revoked or has expired: only a new login helps, and the old tokens are dead.
        if (e.oauthError === "invalid_grant" || e.oauthError === "invalid_client" || e.oauthError === "unauthorized_client") {
          yield* Effect.logWarning(`${def.name}: the refresh token was refused (${e.oauthError}); a new login is needed`)
          yield* write(def, (current) => (current === undefined ? current : dropTokens(current)))
          state.tokens = undefined
          return undefined
        }
        return yield* failed(def)(e)
      }
      yield* write(def, (current) => ({ ...(current ?? entry), tokens: refreshed.right, at: now }))
      yield* Effect.logInfo(`${def.name}: refreshed the access token`)
      state.tokens = refreshed.right
      return refreshed.right
    })

  const authorization = (def: HttpDefinition, state: ServerState): Effect.Effect<string | undefined, AuthError> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      yield* load(def, state, now)
      const current = state.tokens
      if (current === undefined) return undefined
      if (!isExpired(current, now)) return bearer(current)
      return yield* state.lock.withPermits(1)(Effect.gen(function*() {
        // Re-read first: another process may have refreshed (and rotated the refresh token) already.
        const { entry } = yield* readEntry(def)
        const held = entry?.tokens
        if (held !== undefined && !isExpired(held, now)) {
          state.tokens = held
          return bearer(held)
        }
        if (entry === undefined) {
          state.tokens = undefined
          return undefined
        }
        const refreshed = yield* refreshFrom(def, state, entry)
        return refreshed === undefined ? undefined : bearer(refreshed)
      }))
    })

  /**
   * The whole flow, from the challenge to stored tokens. `stepUp` is the scope set a 403 asked to
   * grow to; without it the scopes are chosen as the specification says, plus any a 403 asked for
   * while nobody could log in.
   */
  const authorizeWith = (def: HttpDefinition, state: ServerState, challenge: Challenge, authorizer: Authorizer, stepUp: string | undefined) =>
    Effect.scoped(Effect.gen(function*() {
      const resource = yield* discoverResource(def.url, challenge)
      const issuer = resource.authorization_servers[0]!
      const as = yield* discoverServer(issuer)
      const { entry: stored } = yield* readEntry(def)
      // Credentials of another authorization server are never offered to this one.
      const sameIssuer = stored !== undefined && stored.issuer === as.issuer ? stored : undefined
      if (stored !== undefined && sameIssuer === undefined) {
        yield* Effect.logInfo(`${def.name}: the authorization server is now ${as.issuer} (was ${stored.issuer}); registering anew`)
      }
      const scope = stepUp ?? Flow.initialScopes({
        challenged: challenge.scope,
        resourceScopes: resource.scopes_supported,
        configured: def.auth?.scopes,
        as,
        previous: sameIssuer?.wanted
      })
      const preferredPort = def.auth?.redirectPort ?? portOf(sameIssuer?.client?.redirect_uri)
      const receiver = yield* authorizer.receive(def.name, preferredPort)
      const client = yield* Flow.identify({
        as,
        clientId: def.auth?.clientId,
        clientSecret: def.auth?.clientSecret,
        stored: sameIssuer?.client,
        clientMetadataUrl: def.auth?.clientMetadataUrl ?? options.clientMetadataUrl,
        redirectUri: receiver.redirectUri,
        scope
      })
      const pending = yield* Flow.authorizationRequest({ as, client, redirectUri: receiver.redirectUri, resource: resource.resource, scope })
      yield* Effect.logInfo(`${def.name}: authorizing at ${as.issuer}${scope === undefined ? "" : ` for ${scope}`}`)
      const callback = yield* receiver.complete(pending.url)
      const now = yield* Clock.currentTimeMillis
      const tokens = yield* Flow.exchangeCode({
        as,
        client,
        pending,
        callback,
        redirectUri: receiver.redirectUri,
        resource: resource.resource,
        scope,
        now
      })
      const entry: AuthEntry = {
        issuer: as.issuer,
        metadata: { ...as },
        resource: resource.resource,
        client,
        tokens,
        ...(scope === undefined ? {} : { requested: scope }),
        at: now
      }
      yield* write(def, () => entry)
      state.tokens = tokens
      state.loadedAt = now
      state.needsLogin = undefined
      yield* Effect.logInfo(`${def.name}: authorized at ${as.issuer}`)
      return entry
    })).pipe(Effect.catchTag("OAuthStepFailed", (e) => Effect.fail(failed(def)(e))))

  const refused = (def: HttpDefinition, state: ServerState) => (refusal: Refusal): Effect.Effect<"retry" | "pass", AuthError> =>
    Effect.gen(function*() {
      if (refusal.status !== 401 && refusal.status !== 403) return "pass" as const
      const challenge = yield* parseChallenge(refusal.wwwAuthenticate)
      if (refusal.status === 403 && challenge.error !== "insufficient_scope") return "pass" as const
      return yield* state.lock.withPermits(1)(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const { damaged, entry } = yield* readEntry(def)
        const held = entry?.tokens
        if (refusal.status === 401) {
          // Someone (another request, `auth login`, the daemon) has a newer token than the refused one.
          if (held !== undefined && bearer(held) !== refusal.sent && !isExpired(held, now)) {
            state.tokens = held
            state.needsLogin = undefined
            return "retry" as const
          }
          if (entry !== undefined && refusal.attempt === 0 && held?.refresh_token !== undefined) {
            if ((yield* refreshFrom(def, state, entry)) !== undefined) return "retry" as const
          }
        }
        const granted = Flow.scopeList(held?.scope)
        const scope = refusal.status === 403
          ? Flow.unionScopes(granted, Flow.scopeList(challenge.scope))
          : undefined
        // Asking again for scopes already asked for (granted or not) would only loop.
        const asked = [...granted, ...Flow.scopeList(entry?.requested)]
        if (refusal.status === 403 && Flow.scopeList(scope).every((s) => asked.includes(s))) {
          return yield* new AuthorizationFailed({
            server: def.name,
            reason: `the server refuses with insufficient_scope for ${challenge.scope ?? "an unnamed scope"} although the token holds ` +
              `${held?.scope ?? "no scope"}; not authorizing again for nothing new`
          })
        }
        // A 401 that is no OAuth challenge, from a server nobody configured for OAuth, is the server's own business.
        if (refusal.status === 401 && challenge.bearer !== true && def.auth === undefined && entry === undefined) return "pass" as const
        const authorizer = options.authorizer
        if (authorizer === undefined) {
          if (refusal.status === 403 && entry !== undefined) {
            // Remembered so the login asks for them, without which the call cannot succeed.
            yield* write(def, (current) => (current === undefined ? current : { ...current, wanted: scope! }))
          }
          const reason = refusal.status === 403
            ? `the server wants the scopes ${scope}`
            : damaged !== undefined
            ? `the token store was damaged and has been set aside (${damaged}); log in again`
            : held === undefined
            ? "no login yet"
            : "the server no longer accepts the stored token"
          state.needsLogin = reason
          return yield* required(def, reason, scope)
        }
        yield* authorizeWith(def, state, challenge, authorizer, scope)
        return "retry" as const
      }))
    })

  const status = (def: HttpDefinition): Effect.Effect<AuthStatus> =>
    Effect.gen(function*() {
      const { damaged, entry } = yield* readEntry(def)
      return statusOf(def, entry, { damaged, asked: states.get(def.url)?.needsLogin, now: yield* Clock.currentTimeMillis })
    })

  return UpstreamAuth.of({
    credentials: (def) => {
      if (!usesOAuth(def)) return undefined
      const state = stateOf(def)
      return { authorization: authorization(def, state), refused: refused(def, state) }
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
