/**
 * An Authorizer for authorization servers that approve without a person, as the conformance
 * suite's mock and this repository's test authorization server do: the authorization URL is
 * fetched like a browser would, without following the redirect, and the redirect's Location is
 * the callback. Nothing listens on the redirect URI; it only has to be a loopback URL the server
 * accepts.
 */
import { AuthorizationFailed, type Authorizer } from "@mcpx-fx/upstream/auth/AuthModel"
import * as Effect from "effect/Effect"

/** The redirect URI given to authorization servers; nothing listens there. */
export const RedirectUri = "http://127.0.0.1:8976/callback"

/** Follows the authorization server's approval redirect instead of waiting for a browser. */
export const autoApprove: Authorizer = {
  receive: (server) =>
    Effect.succeed({
      redirectUri: RedirectUri,
      complete: (authorizationUrl) =>
        Effect.tryPromise({
          try: (signal) => fetch(authorizationUrl, { redirect: "manual", signal }),
          catch: (e) => new AuthorizationFailed({ server, reason: `the authorization endpoint could not be reached: ${String(e)}` })
        }).pipe(
          // A GET of the authorization URL is safe to repeat, and a test server on a busy machine
          // sometimes drops the connection it was about to reuse.
          Effect.retry({ times: 1 }),
          Effect.flatMap((response) => {
            const location = response.headers.get("location")
            return location === null
              ? Effect.fail(new AuthorizationFailed({ server, reason: `the authorization endpoint answered HTTP ${response.status} without a redirect` }))
              : Effect.succeed(new URL(location, authorizationUrl))
          })
        )
    })
}
