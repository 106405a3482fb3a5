/** The typed `/v1` client of the daemon's API, loaded only when a command talks to a daemon. */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as Api from "@mcpx-fx/daemon/Api"
import type * as Effect from "effect/Effect"

/** Makes the client; requests go through the HttpClient in context (the daemon's socket). */
export const makeClient = HttpApiClient.make(Api.Api)

/** The typed `/v1` client. */
export type Client = Effect.Effect.Success<typeof makeClient>
