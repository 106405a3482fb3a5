/**
 * The OAuth tokens in use for each HTTP upstream: read from the TokenStore (again every
 * ReloadAfterMs, so another process's login, refresh or logout is seen), the Authorization header
 * they make, and their refresh, one at a time per server.
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as oauth from "oauth4webapi"
import { type AuthError, AuthorizationFailed } from "../AuthModel.js"
import type { HttpDefinition } from "../../ServerDefinition.js"
import type { AuthEntry, StoredTokens, TokenStore } from "../TokenStore.js"
import { bearer, dropTokens, isExpired } from "./AuthStatus.js"
import type { OAuthStepFailed } from "./OAuthDiscovery.js"
import * as Flow from "./OAuthFlow.js"

/**
 * How long tokens read from the store are used before it is read again, so a login, refresh or
 * logout by another process (the CLI beside the daemon) is seen within this long even when the
 * server does not refuse the old token first.
 */
const ReloadAfterMs = 30_000

export interface ServerState {
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

/** Authorizing `def` failed with `e`. */
export const failed = (def: HttpDefinition) => (e: OAuthStepFailed | { readonly message: string }) =>
  new AuthorizationFailed({ server: def.name, reason: e.message })

/** The tokens of every server, over `store`. */
export const make = (store: Context.Tag.Service<TokenStore>) => {
  const states = new Map<string, ServerState>()
  const stateOf = (def: HttpDefinition): ServerState => {
    let state = states.get(def.url)
    if (state === undefined) {
      state = { tokens: undefined, loadedAt: undefined, needsLogin: undefined, lock: Effect.unsafeMakeSemaphore(1) }
      states.set(def.url, state)
    }
    return state
  }

  const readEntry = (def: HttpDefinition) => Effect.map(store.read, (snapshot) => ({ entry: snapshot.servers.get(def.url), damaged: snapshot.damaged }))

  const write = (def: HttpDefinition, change: (entry: AuthEntry | undefined) => AuthEntry | undefined) =>
    store.update(def.url, change).pipe(Effect.mapError((e) => new AuthorizationFailed({ server: def.name, reason: e.message })))

  const loaded = (state: ServerState, now: number): boolean => state.loadedAt !== undefined && now - state.loadedAt < ReloadAfterMs

  const load = (def: HttpDefinition, state: ServerState, now: number) =>
    loaded(state, now)
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

  /** The header from the tokens in use, when they were read lately and have not expired (or there are none). */
  const ready = (state: ServerState, now: number): { readonly authorization: string | undefined } | undefined => {
    if (!loaded(state, now)) return undefined
    const current = state.tokens
    if (current === undefined) return { authorization: undefined }
    return isExpired(current, now) ? undefined : { authorization: bearer(current) }
  }

  const authorization = (def: HttpDefinition, state: ServerState): Effect.Effect<string | undefined, AuthError> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      yield* load(def, state, now)
      // Read now: only tokens that have expired are left to refresh.
      const at = ready(state, now)
      if (at !== undefined) return at.authorization
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

  return { states, stateOf, readEntry, write, refreshFrom, authorization, ready }
}

/** The tokens of every server. */
export type Tokens = ReturnType<typeof make>
