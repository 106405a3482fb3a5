/**
 * Authorizing an HTTP upstream: what a 401 or 403 means (a newer token elsewhere, a refresh, or the
 * whole flow again, asking for more scopes on a step-up), and the flow itself, from the challenge
 * to stored tokens, through an Authorizer when there is one.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { type AuthError, AuthorizationFailed, AuthorizationRequired, type Authorizer, type Refusal } from "../AuthModel.js"
import type { HttpDefinition } from "../../ServerDefinition.js"
import type { AuthEntry } from "../TokenStore.js"
import { failed, type ServerState, type Tokens } from "./AuthTokens.js"
import { bearer, isExpired, portOf } from "./AuthStatus.js"
import { type Challenge, discoverResource, discoverServer, parseChallenge } from "./OAuthDiscovery.js"
import * as Flow from "./OAuthFlow.js"

const required = (def: HttpDefinition, reason: string, scope?: string) =>
  new AuthorizationRequired({ server: def.name, url: def.url, reason, ...(scope === undefined ? {} : { scope }) })

/** Authorizing over `tokens`; `clientMetadataUrl` where servers take one, `authorizer` when a person can approve. */
export const make = (
  tokens: Tokens,
  options: { readonly authorizer?: Authorizer | undefined; readonly clientMetadataUrl?: string | undefined }
) => {
  const { readEntry, refreshFrom, write } = tokens

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

  return { authorizeWith, refused }
}
