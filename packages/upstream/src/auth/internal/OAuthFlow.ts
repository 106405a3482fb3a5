/**
 * The grant half of MCP authorization, on oauth4webapi: which scopes to ask for, which client
 * identity to use at an authorization server (pre-registered, a Client ID Metadata Document, or
 * dynamic registration, in the specification's order), the authorization code request with PKCE
 * (S256), `state` and the RFC 8707 `resource`, the redirect's checks (`state`, RFC 9207 `iss`),
 * and the token endpoint (code exchange and refresh) with the client's authentication method.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as oauth from "oauth4webapi"
import type { StoredClient, StoredTokens } from "../TokenStore.js"
import { attempt, OAuthStepFailed, requestOptions } from "./OAuthDiscovery.js"

/** What mcpx-fx calls itself when it registers. */
export const ClientName = "mcpx-fx"

// ---------------------------------------------------------------------------------------------
// Scopes
// ---------------------------------------------------------------------------------------------

/** The scopes of a space-separated list, in order, without repeats. */
export const scopeList = (text: string | undefined): ReadonlyArray<string> => [
  ...new Set((text ?? "").split(/\s+/).filter((s) => s.length > 0))
]

/** A space-separated list of the union, in first-seen order; undefined when empty. */
export const unionScopes = (...lists: ReadonlyArray<ReadonlyArray<string>>): string | undefined => {
  const all = [...new Set(lists.flat())]
  return all.length === 0 ? undefined : all.join(" ")
}

/**
 * The scopes of a first authorization, as the specification orders them: the challenge's `scope`,
 * else every scope the resource metadata lists, else none (the parameter is left out). The
 * configured scopes are added, and `offline_access` when the authorization server offers it (and
 * refresh tokens), since mcpx-fx wants a refresh token to keep working without a person.
 */
export const initialScopes = (input: {
  readonly challenged: string | undefined
  readonly resourceScopes: ReadonlyArray<string> | undefined
  readonly configured: ReadonlyArray<string> | undefined
  readonly as: oauth.AuthorizationServer
  readonly previous?: string | undefined
}): string | undefined => {
  const base = input.challenged !== undefined ? scopeList(input.challenged) : (input.resourceScopes ?? [])
  return unionScopes(scopeList(input.previous), base, input.configured ?? [], offlineAccess(input.as, base))
}

const offlineAccess = (as: oauth.AuthorizationServer, base: ReadonlyArray<string>): ReadonlyArray<string> => {
  const refreshable = as.grant_types_supported === undefined || as.grant_types_supported.includes("refresh_token")
  return base.length > 0 && refreshable && (as.scopes_supported ?? []).includes("offline_access") ? ["offline_access"] : []
}

// ---------------------------------------------------------------------------------------------
// Client identity
// ---------------------------------------------------------------------------------------------

const secretMethods = ["client_secret_basic", "client_secret_post"] as const

// RFC 8414: an absent token_endpoint_auth_methods_supported means client_secret_basic.
const supportedMethods = (as: oauth.AuthorizationServer): ReadonlyArray<string> => as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"]

/** The authentication method of a client with a secret: the first of basic and post the server takes. */
export const secretMethod = (as: oauth.AuthorizationServer): string => {
  const supported = supportedMethods(as)
  return secretMethods.find((m) => supported.includes(m)) ?? "client_secret_basic"
}

/**
 * client_secret_basic with the credentials form-encoded as browsers encode forms (RFC 6749 §2.3.1).
 * oauth4webapi's own also percent-encodes `-`, `.`, `_` and `~`, which servers that do not decode
 * the credentials (many) then fail to recognise; the WHATWG encoding leaves those as they are.
 */
const clientSecretBasic = (secret: string): oauth.ClientAuth => (_as, client, _body, headers) => {
  const encode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2)
  headers.set("authorization", `Basic ${btoa(`${encode(client.client_id)}:${encode(secret)}`)}`)
}

/** oauth4webapi's client and client authentication for a stored client. */
export const clientOf = (client: StoredClient): { readonly client: oauth.Client; readonly auth: oauth.ClientAuth } => {
  const secret = client.client_secret
  const auth = secret === undefined || client.token_endpoint_auth_method === "none"
    ? oauth.None()
    : client.token_endpoint_auth_method === "client_secret_post"
    ? oauth.ClientSecretPost(secret)
    : clientSecretBasic(secret)
  return { client: { client_id: client.client_id, token_endpoint_auth_method: client.token_endpoint_auth_method }, auth }
}

/** How mcpx-fx may identify itself, from the configuration and the options. */
export interface IdentityInput {
  readonly as: oauth.AuthorizationServer
  readonly clientId: string | undefined
  readonly clientSecret: string | undefined
  /** A client registered earlier at this same issuer (never one from another issuer). */
  readonly stored: StoredClient | undefined
  /** The HTTPS URL of mcpx-fx's Client ID Metadata Document, when one is published. */
  readonly clientMetadataUrl: string | undefined
  readonly redirectUri: string
  readonly scope: string | undefined
}

/**
 * The client to authorize as: pre-registered credentials from the configuration, else the one
 * registered earlier (when it was registered for this redirect URI), else a Client ID Metadata
 * Document when the server takes them, else dynamic client registration when it offers it.
 */
export const identify = (input: IdentityInput) =>
  Effect.gen(function*() {
    const { as } = input
    if (input.clientId !== undefined) {
      const method = input.clientSecret === undefined ? "none" : secretMethod(as)
      return {
        client_id: input.clientId,
        ...(input.clientSecret === undefined ? {} : { client_secret: input.clientSecret }),
        token_endpoint_auth_method: method,
        source: "config"
      } satisfies StoredClient
    }
    const stored = input.stored
    // A registration is bound to the redirect URI it registered; a metadata document to its URL.
    const reusable = stored !== undefined &&
      (stored.source === "dcr" ? stored.redirect_uri === input.redirectUri : stored.source === "cimd" && stored.client_id === input.clientMetadataUrl)
    if (reusable) return stored
    if (as.client_id_metadata_document_supported === true && input.clientMetadataUrl !== undefined) {
      return { client_id: input.clientMetadataUrl, token_endpoint_auth_method: "none", source: "cimd" } satisfies StoredClient
    }
    if (as.registration_endpoint !== undefined) return yield* register(input)
    return yield* new OAuthStepFailed({
      step: "registration",
      reason: `the authorization server ${as.issuer} offers no client registration and takes no client metadata documents; ` +
        `register mcpx-fx there and set auth.clientId (and auth.clientSecret) for this server`
    })
  })

const Registered = Schema.Struct({
  client_id: Schema.String,
  client_secret: Schema.optionalWith(Schema.String, { exact: true }),
  token_endpoint_auth_method: Schema.optionalWith(Schema.String, { exact: true })
})

const OAuthErrorBody = Schema.Struct({ error: Schema.String, error_description: Schema.optional(Schema.String) })

const register = (input: IdentityInput) =>
  Effect.gen(function*() {
    const { as } = input
    const supported = supportedMethods(as)
    const requested = supported.includes("none") ? "none" : secretMethod(as)
    const metadata = {
      client_name: ClientName,
      redirect_uris: [input.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: requested,
      // A CLI on the user's machine is a native application (RFC 8252), with a loopback redirect.
      application_type: "native",
      ...(input.scope === undefined ? {} : { scope: input.scope })
    }
    const where = `registering with ${as.registration_endpoint}`
    const response = yield* attempt(
      "registration",
      where,
      (signal) => oauth.dynamicClientRegistrationRequest(as, metadata, requestOptions(as.issuer, signal))
    )
    const body = yield* attempt("registration", where, () => response.json() as Promise<unknown>).pipe(
      Effect.orElseSucceed(() => undefined)
    )
    // Read leniently: servers often leave out client_secret_expires_at, which RFC 7591 requires
    // with a secret and oauth4webapi insists on; nothing here depends on it.
    const decoded = Schema.decodeUnknownEither(Registered)(body)
    if (response.status !== 201 && response.status !== 200 || Either.isLeft(decoded)) {
      const error = Either.getRight(Schema.decodeUnknownEither(OAuthErrorBody)(body))
      return yield* new OAuthStepFailed({
        step: "registration",
        reason: `${where}: HTTP ${response.status}${
          Option.match(error, {
            onNone: () => " without a client_id",
            onSome: (e) => ` (${e.error}${e.error_description === undefined ? "" : `: ${e.error_description}`})`
          })
        }`
      })
    }
    const registered = decoded.right
    const secret = registered.client_secret
    const granted = registered.token_endpoint_auth_method
    const method = granted ?? (secret === undefined ? "none" : requested === "none" ? secretMethod(as) : requested)
    return {
      client_id: registered.client_id,
      ...(secret === undefined ? {} : { client_secret: secret }),
      token_endpoint_auth_method: method,
      source: "dcr",
      redirect_uri: input.redirectUri
    } satisfies StoredClient
  })

// ---------------------------------------------------------------------------------------------
// Authorization code grant
// ---------------------------------------------------------------------------------------------

/** One authorization request, and what is needed to finish it. */
export interface PendingAuthorization {
  readonly url: URL
  readonly state: string
  readonly verifier: string
}

/** The authorization URL: code flow with PKCE S256, state, the RFC 8707 resource and the scopes, if any. */
export const authorizationRequest = (input: {
  readonly as: oauth.AuthorizationServer
  readonly client: StoredClient
  readonly redirectUri: string
  readonly resource: string
  readonly scope: string | undefined
}) =>
  Effect.gen(function*() {
    const endpoint = input.as.authorization_endpoint
    if (endpoint === undefined || !URL.canParse(endpoint)) {
      return yield* new OAuthStepFailed({ step: "authorization", reason: `the authorization server ${input.as.issuer} names no authorization endpoint` })
    }
    const verifier = oauth.generateRandomCodeVerifier()
    const challenge = yield* Effect.promise(() => oauth.calculatePKCECodeChallenge(verifier))
    const state = oauth.generateRandomState()
    const url = new URL(endpoint)
    url.searchParams.set("response_type", "code")
    url.searchParams.set("client_id", input.client.client_id)
    url.searchParams.set("redirect_uri", input.redirectUri)
    url.searchParams.set("code_challenge", challenge)
    url.searchParams.set("code_challenge_method", "S256")
    url.searchParams.set("state", state)
    url.searchParams.set("resource", input.resource)
    if (input.scope !== undefined) url.searchParams.set("scope", input.scope)
    return { url, state, verifier } satisfies PendingAuthorization
  })

/** The tokens of a token endpoint response, with the lifetime turned into a time. */
const stored = (response: oauth.TokenEndpointResponse, now: number, requestedScope: string | undefined, previous?: string) =>
  ({
    access_token: response.access_token,
    token_type: response.token_type,
    // A rotating server sends a new refresh token; one that does not keeps the old one valid.
    ...(response.refresh_token !== undefined
      ? { refresh_token: response.refresh_token }
      : previous === undefined
      ? {}
      : { refresh_token: previous }),
    ...(response.expires_in === undefined ? {} : { expires_at: now + response.expires_in * 1000 }),
    ...(response.scope !== undefined ? { scope: response.scope } : requestedScope === undefined ? {} : { scope: requestedScope })
  }) satisfies StoredTokens

/**
 * Finishes an authorization from the redirect: the state must be the request's, `iss` (RFC 9207)
 * must be the issuer exactly when present and is required when the server advertises it, an error
 * is the user's or the server's refusal; then the code is exchanged for tokens.
 */
export const exchangeCode = (input: {
  readonly as: oauth.AuthorizationServer
  readonly client: StoredClient
  readonly pending: PendingAuthorization
  readonly callback: URL
  readonly redirectUri: string
  readonly resource: string
  readonly scope: string | undefined
  readonly now: number
}) =>
  Effect.gen(function*() {
    const { auth, client } = clientOf(input.client)
    const params = yield* Effect.try({
      try: () => oauth.validateAuthResponse(input.as, client, input.callback, input.pending.state),
      catch: (e) =>
        new OAuthStepFailed({
          step: "authorization",
          reason: e instanceof oauth.AuthorizationResponseError
            ? `the authorization server refused: ${e.error}${e.error_description === undefined ? "" : ` (${e.error_description})`}`
            : `the redirect from ${input.as.issuer} was refused: ${e instanceof Error ? e.message : String(e)}`
        })
    })
    const response = yield* attempt(
      "token",
      `exchanging the authorization code at ${input.as.token_endpoint}`,
      (signal) =>
        oauth.authorizationCodeGrantRequest(input.as, client, auth, params, input.redirectUri, input.pending.verifier, {
          ...requestOptions(input.as.issuer, signal),
          additionalParameters: { resource: input.resource }
        }).then((r) => oauth.processAuthorizationCodeResponse(input.as, client, r))
    )
    return stored(response, input.now, input.scope)
  })

/** A refresh token grant (with the resource); the new tokens, the refresh token rotated if the server rotates it. */
export const refresh = (input: {
  readonly as: oauth.AuthorizationServer
  readonly client: StoredClient
  readonly tokens: StoredTokens & { readonly refresh_token: string }
  readonly resource: string
  readonly now: number
}) =>
  Effect.gen(function*() {
    const { auth, client } = clientOf(input.client)
    const response = yield* attempt(
      "refresh",
      `refreshing the access token at ${input.as.token_endpoint}`,
      (signal) =>
        oauth.refreshTokenGrantRequest(input.as, client, auth, input.tokens.refresh_token, {
          ...requestOptions(input.as.issuer, signal),
          additionalParameters: { resource: input.resource }
        }).then((r) => oauth.processRefreshTokenResponse(input.as, client, r))
    )
    return stored(response, input.now, input.tokens.scope, input.tokens.refresh_token)
  })
