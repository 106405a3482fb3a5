/**
 * The discovery half of MCP authorization, on oauth4webapi: what a 401 or 403 challenge says
 * (RFC 6750 / RFC 9728 `WWW-Authenticate`), the server's protected resource metadata (RFC 9728) and
 * its authorization server's metadata (RFC 8414, then OpenID Connect Discovery), each looked for
 * where, and in the order, the MCP authorization specification says.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as oauth from "oauth4webapi"

/** One step of authorizing could not be done; `reason` says what was tried and what came back. */
export class OAuthStepFailed extends Data.TaggedError("OAuthStepFailed")<{
  readonly step: "challenge" | "resource-metadata" | "server-metadata" | "registration" | "authorization" | "token" | "refresh"
  readonly reason: string
  /** The authorization server's OAuth error code (`invalid_grant`, …), when it answered with one. */
  readonly oauthError?: string
}> {
  override get message(): string {
    return this.reason
  }
}

/** How long any one request to a metadata, registration or token endpoint may take. */
export const RequestTimeoutMs = 15_000

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** The OAuth error code of a failure from oauth4webapi, when the server answered with one. */
export const oauthErrorOf = (e: unknown): string | undefined =>
  e instanceof oauth.ResponseBodyError ? e.error : e instanceof oauth.AuthorizationResponseError ? e.error : undefined

/**
 * A plain-HTTP URL is only allowed on a loopback host: the specification wants HTTPS for every
 * authorization endpoint, and local test and development servers are the one honest exception.
 */
export const isLoopbackUrl = (url: string): boolean => {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
    return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)
  } catch {
    return false
  }
}

/** The oauth4webapi options every request gets: a timeout (joined with interruption) and, on loopback, plain HTTP. */
export const requestOptions = (url: string, signal: AbortSignal) => ({
  signal: AbortSignal.any([signal, AbortSignal.timeout(RequestTimeoutMs)]),
  ...(isLoopbackUrl(url) ? { [oauth.allowInsecureRequests]: true } : {})
})

/** A promise of oauth4webapi as an effect: interruption aborts it, a rejection is the step's failure. */
export const attempt = <A>(step: OAuthStepFailed["step"], what: string, run: (signal: AbortSignal) => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (e) => {
      const code = oauthErrorOf(e)
      return new OAuthStepFailed({
        step,
        reason: `${what}: ${describe(e)}${code === undefined ? "" : ` (${code})`}`,
        ...(code === undefined ? {} : { oauthError: code })
      })
    }
  })

// ---------------------------------------------------------------------------------------------
// Challenges
// ---------------------------------------------------------------------------------------------

/** What a Bearer challenge asks for. */
export interface Challenge {
  /** Whether the header held a Bearer challenge at all (an OAuth resource server's 401 does). */
  readonly bearer?: boolean
  readonly resourceMetadata?: string
  readonly scope?: string
  readonly error?: string
}

/**
 * The Bearer challenge of a `WWW-Authenticate` header (the first challenge when none is Bearer).
 * The header grammar is oauth4webapi's: it parses challenges of a resource server's response in
 * `protectedResourceRequest`, which is handed the already-received response instead of fetching.
 */
export const parseChallenge = (header: string | undefined): Effect.Effect<Challenge> => {
  if (header === undefined || header.trim() === "") return Effect.succeed({})
  const received = new Response(null, { status: 401, headers: { "www-authenticate": header } })
  return Effect.promise(() =>
    oauth.protectedResourceRequest("-", "GET", new URL("http://challenge.invalid/"), undefined, null, {
      [oauth.customFetch]: () => Promise.resolve(received),
      [oauth.allowInsecureRequests]: true
    }).then(
      (): Challenge => ({}),
      (e: unknown): Challenge => {
        if (!(e instanceof oauth.WWWAuthenticateChallengeError)) return {}
        const bearer = e.cause.find((c) => c.scheme === "bearer")
        const p = (bearer ?? e.cause[0])?.parameters ?? {}
        return {
          bearer: bearer !== undefined,
          ...(p.resource_metadata === undefined ? {} : { resourceMetadata: p.resource_metadata }),
          ...(p.scope === undefined ? {} : { scope: p.scope }),
          ...(p.error === undefined ? {} : { error: p.error })
        }
      }
    )
  )
}

// ---------------------------------------------------------------------------------------------
// Protected resource metadata (RFC 9728)
// ---------------------------------------------------------------------------------------------

const NonEmptyStrings = Schema.Array(Schema.String).pipe(Schema.minItems(1))

/** The parts of a protected resource metadata document mcpx-fx uses. */
export const ResourceMetadata = Schema.Struct({
  resource: Schema.String,
  authorization_servers: NonEmptyStrings,
  scopes_supported: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
})
/** The parts of a protected resource metadata document mcpx-fx uses. */
export type ResourceMetadata = typeof ResourceMetadata.Type

const decodeResourceMetadata = Schema.decodeUnknownEither(ResourceMetadata)

/**
 * Where to look for the server's protected resource metadata: the URL its challenge named, else
 * the well-known URI at the endpoint's path, then at the root.
 */
export const resourceMetadataUrls = (serverUrl: string, challenge: Challenge): ReadonlyArray<string> => {
  if (challenge.resourceMetadata !== undefined) return [challenge.resourceMetadata]
  const url = new URL(serverUrl)
  const path = url.pathname.replace(/\/+$/, "")
  const root = `${url.origin}/.well-known/oauth-protected-resource`
  return path === "" ? [root] : [`${root}${path}`, root]
}

const normalisedPath = (path: string): string => path.replace(/\/+$/, "")

/**
 * Whether the metadata's `resource` identifies this server: the same origin (scheme and host
 * compared without case, as URLs do), and a path that is the server's own or a parent of it.
 * Anything else is metadata for another resource, and a token for it must not be asked for here.
 */
export const resourceMatches = (resource: string, serverUrl: string): boolean => {
  if (!URL.canParse(resource)) return false
  const r = new URL(resource)
  const s = new URL(serverUrl)
  if (r.origin !== s.origin || r.hash !== "") return false
  const rp = normalisedPath(r.pathname)
  const sp = normalisedPath(s.pathname)
  return rp === "" || rp === sp || sp.startsWith(`${rp}/`)
}

const getJson = (url: string, signal: AbortSignal) => fetch(url, { headers: { accept: "application/json" }, ...requestOptions(url, signal) })

/** Finds and checks the server's protected resource metadata. */
export const discoverResource = (serverUrl: string, challenge: Challenge) =>
  Effect.gen(function*() {
    const tried: Array<string> = []
    for (const url of resourceMetadataUrls(serverUrl, challenge)) {
      const response = yield* attempt("resource-metadata", `GET ${url}`, (signal) => getJson(url, signal))
      if (response.status !== 200) {
        tried.push(`${url} (HTTP ${response.status})`)
        yield* Effect.promise(() => response.body?.cancel() ?? Promise.resolve())
        continue
      }
      const json = yield* attempt("resource-metadata", `reading ${url}`, () => response.json() as Promise<unknown>)
      const metadata = decodeResourceMetadata(json)
      if (Either.isLeft(metadata)) {
        return yield* new OAuthStepFailed({
          step: "resource-metadata",
          reason: `${url} is not protected resource metadata with a resource and at least one authorization server`
        })
      }
      if (!resourceMatches(metadata.right.resource, serverUrl)) {
        return yield* new OAuthStepFailed({
          step: "resource-metadata",
          reason: `the protected resource metadata at ${url} is for ${JSON.stringify(metadata.right.resource)}, ` +
            `not for ${serverUrl}; refusing to ask for a token for another resource`
        })
      }
      return metadata.right
    }
    return yield* new OAuthStepFailed({
      step: "resource-metadata",
      reason: `found no protected resource metadata (tried ${tried.join(", ")})`
    })
  })

// ---------------------------------------------------------------------------------------------
// Authorization server metadata (RFC 8414, OpenID Connect Discovery 1.0)
// ---------------------------------------------------------------------------------------------

/**
 * The metadata URLs of an issuer in the specification's order: with a path, RFC 8414 and OpenID
 * path insertion, then OpenID path appending; without one, RFC 8414 then OpenID.
 */
export const serverMetadataUrls = (issuer: string): ReadonlyArray<string> => {
  const url = new URL(issuer)
  const path = url.pathname.replace(/\/+$/, "")
  const oauthWellKnown = `${url.origin}/.well-known/oauth-authorization-server`
  const oidcWellKnown = `${url.origin}/.well-known/openid-configuration`
  return path === ""
    ? [oauthWellKnown, oidcWellKnown]
    : [`${oauthWellKnown}${path}`, `${oidcWellKnown}${path}`, `${url.origin}${path}/.well-known/openid-configuration`]
}

/**
 * Finds the authorization server's metadata. The first document found must name the issuer it was
 * looked up for (oauth4webapi checks); one that names another is refused rather than passed over,
 * since its endpoints are not that issuer's. PKCE with S256 must be on offer.
 */
export const discoverServer = (issuer: string) =>
  Effect.gen(function*() {
    if (!URL.canParse(issuer)) {
      return yield* new OAuthStepFailed({ step: "server-metadata", reason: `the authorization server ${JSON.stringify(issuer)} is not a URL` })
    }
    const tried: Array<string> = []
    for (const url of serverMetadataUrls(issuer)) {
      const response = yield* attempt("server-metadata", `GET ${url}`, (signal) => getJson(url, signal))
      if (response.status !== 200) {
        tried.push(`${url} (HTTP ${response.status})`)
        yield* Effect.promise(() => response.body?.cancel() ?? Promise.resolve())
        continue
      }
      const as = yield* attempt(
        "server-metadata",
        `the authorization server metadata at ${url}`,
        () => oauth.processDiscoveryResponse(new URL(issuer), response)
      )
      if (!(as.code_challenge_methods_supported ?? []).includes("S256")) {
        return yield* new OAuthStepFailed({
          step: "server-metadata",
          reason: `the authorization server ${as.issuer} does not offer PKCE with S256 (code_challenge_methods_supported), ` +
            "which MCP authorization requires"
        })
      }
      return as
    }
    return yield* new OAuthStepFailed({
      step: "server-metadata",
      reason: `found no metadata for the authorization server ${issuer} (tried ${tried.join(", ")})`
    })
  })
