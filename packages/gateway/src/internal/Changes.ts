/**
 * The Gateway's one stream of changes: what every live upstream instance sends outside its calls
 * (list changes and resource updates, URIs re-homed as hosts see them), and the updates of a
 * modern upstream's own `subscriptions/listen` for a watched resource.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import type { Pool } from "@mcpx-fx/upstream/pool/Pool"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type { Caller, GatewayChange, GatewayServer } from "../GatewayModel.js"
import type { ToolCatalog } from "../ToolCatalog.js"
import * as Listings from "./Listings.js"
import { poolCaller } from "./UpstreamRequests.js"

/** What the changes need of the Gateway. */
export interface ChangesDeps {
  readonly servers: () => ReadonlyArray<GatewayServer>
  readonly pool: Pool["Type"]
  readonly catalog: ToolCatalog["Type"]
  /** The server as the settings stand now. */
  readonly current: (server: GatewayServer) => Effect.Effect<GatewayServer>
}

/** The hub of changes, fed for as long as the scope lasts. */
export const make = (deps: ChangesDeps) =>
  Effect.gen(function*() {
    const { catalog, current, pool } = deps
    const changes = yield* PubSub.sliding<GatewayChange>(1024)
    const untied = yield* pool.notifications
    yield* Queue.take(untied).pipe(
      Effect.flatMap(({ notification, server: name }) => {
        const server = deps.servers().find((s) => s.name === name)
        const change = server === undefined ? undefined : Listings.changeOf(server, notification.method, notification.params)
        if (change === undefined) return Effect.void
        const forget = change._tag === "ToolsListChanged" ? catalog.forget(change.server) : Effect.void
        return Effect.zipRight(forget, PubSub.publish(changes, change))
      }),
      Effect.forever,
      Effect.forkScoped
    )

    // A modern upstream has no resources/subscribe (-32601): the URI is watched with a
    // subscriptions/listen of its own instead, held open (no call timeout) for as long as the
    // watch, its updates published like every other update.
    const listen = (configured: GatewayServer, caller: Caller, uri: string) =>
      Effect.flatMap(current(configured), (server) =>
        pool.withSession(server.pool, poolCaller(server, caller), (session) =>
          session.request(Method.SubscriptionsListen, { notifications: { resourceSubscriptions: [uri] } }, {
            ...caller,
            onNotification: (n) => {
              const change = Listings.changeOf(server, n.method, n.params)
              return change === undefined ? Effect.void : PubSub.publish(changes, change)
            }
          }))).pipe(
          Effect.catchAll((e) =>
            Effect.logDebug(`${configured.name}: subscriptions/listen for ${uri} ended: ${e.message}`)
          ),
          Effect.interruptible
        )

    return { changes, listen }
  })
