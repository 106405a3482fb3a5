/**
 * What OAuth for HTTP upstreams answers with and is asked through: its errors, what the transport
 * of one definition asks (Credentials) and reports (Refusal), and the Authorizer that completes an
 * authorization interactively.
 */
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"

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
  /**
   * The same header when it can be given without waiting (the tokens were read lately and have not
   * expired, or there are none); undefined when `authorization` must read the store or refresh
   * first. `now` is the caller's clock.
   */
  readonly ready: (now: number) => { readonly authorization: string | undefined } | undefined
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
