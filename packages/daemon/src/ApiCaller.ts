/**
 * Who calls through `/v1`: the caller's session (for servers pooled per session) and the revision
 * its host reached mcpx-fx with (seed 000, "Who is legacy"). `mcpx-fx serve` names the revision in
 * `X-Mcpx-Caller-Protocol` on `/v1/call` and `/v1/ask`, so that under `protocol: follow` a legacy
 * host's call is served by the legacy lane. Kept apart from Api.ts so the ask routes can use it
 * without an import cycle.
 */
import * as RevisionSchema from "@mcpx-fx/protocol/RevisionSchema"
import * as Schema from "effect/Schema"
import type { Caller } from "@mcpx-fx/gateway/GatewayModel"

/**
 * The caller's revision, on the routes that take a caller. Absent, the caller is modern (the CLI,
 * `/v1` direct). A value that is not a revision mcpx-fx speaks is a 400.
 */
export const CallerHeaders = Schema.Struct({
  "x-mcpx-caller-protocol": Schema.optionalWith(RevisionSchema.RevisionSchema, { exact: true })
})

/** The gateway caller of a `/v1` request, from its payload's session and its headers. */
export const apiCaller = (session: string | undefined, headers: typeof CallerHeaders.Type = {}): Caller => {
  const revision = headers["x-mcpx-caller-protocol"]
  return {
    ...(session !== undefined ? { sessionId: session } : {}),
    ...(revision !== undefined ? { revision } : {})
  }
}

/**
 * Whether a request was made by a browser page rather than the CLI or another program: it carries
 * an `Origin`, or a `Sec-Fetch-Site` other than `none` (`none` is a person typing the URL). Any
 * page on a loopback origin passes the edge's Origin policy, and a GET needs no preflight (an
 * `<img>` makes one), so such a GET is answered from what is known and never starts a server.
 */
export const fromBrowser = (headers: Readonly<Record<string, string | undefined>>): boolean => {
  const site = headers["sec-fetch-site"]?.trim().toLowerCase()
  return headers["origin"] !== undefined || (site !== undefined && site !== "" && site !== "none")
}
