/**
 * Resource subscriptions forwarded to the owning upstream and counted, so one upstream
 * subscription serves every host watching a URI and the last one to leave unsubscribes. A modern
 * upstream, which has no `resources/subscribe`, is watched with a `subscriptions/listen` of its
 * own instead, owned by the count rather than by a single watcher.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { Caller, GatewayCallError, GatewayServer } from "../GatewayModel.js"
import * as Names from "../Names.js"

/** What the watches need of the Gateway. */
export interface WatchDeps {
  readonly servers: () => ReadonlyArray<GatewayServer>
  readonly request: (server: GatewayServer, caller: Caller, method: string, params: JsonObject) => Effect.Effect<JsonObject, GatewayCallError>
  /** Holds a modern upstream's listen for `uri` open until interrupted, publishing its updates. */
  readonly listen: (server: GatewayServer, caller: Caller, uri: string) => Effect.Effect<void>
  readonly unknownResource: (uri: string, caller: Caller) => Effect.Effect<never, GatewayCallError>
}

export const make = (deps: WatchDeps) => {
  // Upstream subscriptions by server and upstream URI, with how many watches hold each.
  const watching = new Map<string, number>()
  // Modern upstreams' URI watches: the scope of the subscriptions/listen that serves each.
  const listens = new Map<string, Scope.CloseableScope>()
  const watchResource = (caller: Caller, uri: string): Effect.Effect<void, GatewayCallError, Scope.Scope> => {
    const found = Names.resolveUri(deps.servers(), uri)
    if (found === undefined) return deps.unknownResource(uri, caller)
    const key = `${found.server.name}\u0000${found.uri}`
    const params = { uri: found.uri }
    const release = Effect.suspend(() => {
      const left = (watching.get(key) ?? 1) - 1
      if (left > 0) return Effect.sync(() => void watching.set(key, left))
      watching.delete(key)
      const listening = listens.get(key)
      if (listening !== undefined) {
        listens.delete(key)
        return Scope.close(listening, Exit.void)
      }
      // A session request must stay interruptible inside this finalizer: its stream ends by
      // interrupting its own reader.
      return Effect.interruptible(deps.request(found.server, caller, Method.ResourcesUnsubscribe, params)).pipe(
        Effect.catchAll((e) => Effect.logDebug(`${found.server.name}: resources/unsubscribe ${found.uri} failed: ${e.message}`))
      )
    })
    const hold = Effect.uninterruptible(
      Effect.zipRight(Effect.sync(() => void watching.set(key, (watching.get(key) ?? 0) + 1)), Effect.addFinalizer(() => release))
    )
    const listen = deps.listen(found.server, caller, found.uri)
    const subscribe = deps.request(found.server, caller, Method.ResourcesSubscribe, params).pipe(
      Effect.asVoid,
      Effect.catchIf(
        (e) => e._tag === "UpstreamRpcError" && e.code === ErrorCode.MethodNotFound,
        () =>
          Effect.gen(function*() {
            // Owned by the count, not by this watcher: the listen lasts until the last one leaves.
            const scope = yield* Scope.make()
            listens.set(key, scope)
            yield* Effect.forkIn(listen, scope)
          })
      )
    )
    return Effect.suspend(() => (watching.get(key) ?? 0) > 0 ? hold : Effect.zipRight(subscribe, hold))
  }

  return { watchResource }
}
