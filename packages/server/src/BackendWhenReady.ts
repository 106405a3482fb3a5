/**
 * A Backend that is still being built. Each of its calls waits for the real one and then runs
 * there. A host can thus be answered what needs no backend (`initialize`, `ping`) while the
 * gateway starts behind it: `serve` answers a host's first request before its upstream pool, era
 * cache and config watcher exist, and a host's first listing waits for them.
 *
 * A build that fails is reported the way a Backend reports a failure: a listing with an empty
 * result and the failure beside it, a call failed with -32603 and the build's message. The
 * process that built it ends with that error too (see `serve`).
 *
 * `changes` and `watchResource` are always declared, since a host's capabilities are fixed before
 * the real Backend is known: a real one without them gives a queue that nothing is offered to and
 * a refused watch.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { type Backend, type BackendError, type Change, type Listing, UpstreamError } from "./Backend.js"

type BackendService = Backend["Type"]

/** An error of mcpx-fx's own, not of an upstream's. */
const own = (method: string, code: number, rpcMessage: string) => new UpstreamError({ server: "mcpx-fx", method, code, rpcMessage })

/** The Backend `ready` yields, once it does; every call made before then waits for it. */
export const whenReady = <E extends { readonly message: string }>(ready: Effect.Effect<BackendService, E>): BackendService => {
  const call = <A, R>(method: string, use: (b: BackendService) => Effect.Effect<A, BackendError, R>) =>
    Effect.flatMap(Effect.mapError(ready, (e) => own(method, ErrorCode.InternalError, `mcpx-fx could not start: ${e.message}`)), use)
  const listing = (use: (b: BackendService) => Effect.Effect<Listing>): Effect.Effect<Listing> =>
    Effect.matchEffect(ready, {
      onFailure: (e) => Effect.succeed({ items: [], failures: [{ server: "mcpx-fx", message: `could not start: ${e.message}` }] }),
      onSuccess: use
    })
  return {
    listTools: (caller) => listing((b) => b.listTools(caller)),
    listPrompts: (caller) => listing((b) => b.listPrompts(caller)),
    listResources: (caller) => listing((b) => b.listResources(caller)),
    listResourceTemplates: (caller) => listing((b) => b.listResourceTemplates(caller)),
    callTool: (caller, name, args, meta) => call(Method.ToolsCall, (b) => b.callTool(caller, name, args, meta)),
    getPrompt: (caller, name, args, meta) => call(Method.PromptsGet, (b) => b.getPrompt(caller, name, args, meta)),
    readResource: (caller, uri, meta) => call(Method.ResourcesRead, (b) => b.readResource(caller, uri, meta)),
    complete: (caller, params, meta) => call(Method.CompletionComplete, (b) => b.complete(caller, params, meta)),
    changes: Effect.matchEffect(ready, {
      onFailure: () => Queue.bounded<Change>(1),
      onSuccess: (b) => b.changes ?? Queue.bounded<Change>(1)
    }),
    watchResource: (caller, uri) =>
      call(Method.ResourcesSubscribe, (b) =>
        b.watchResource === undefined
          ? Effect.fail(own(Method.ResourcesSubscribe, ErrorCode.MethodNotFound, "resources cannot be subscribed to"))
          : b.watchResource(caller, uri))
  }
}
