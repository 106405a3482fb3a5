/**
 * What `GET /v1/calls/recent` does (CallsApi.ts has the route): the owner reads the ring the daemon
 * provides (RecentCalls.ts); a daemon that keeps none (`RecentCalls.off`, in tests) has no calls
 * to show.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Redact from "@mcpx-fx/gateway/Redact"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { Api } from "./Api.js"
import { CallsForbidden, type RecentQuery } from "./CallsApi.js"
import * as OwnerChanges from "./OwnerChanges.js"
import { RecentCalls } from "./RecentCalls.js"

const forbidden = new CallsForbidden({
  detail: "recent calls are shown only to the daemon's owner: on its unix socket (the CLI), or to the live page opened with `mcpx-fx ui`"
})

/** The calls after `query.after`, once there are some or `query.waitMs` is over. */
export const recent = (query: typeof RecentQuery.Type) =>
  Effect.gen(function*() {
    if (!(yield* FiberRef.get(Redact.RawForOwner))) return yield* forbidden
    const ring = yield* RecentCalls
    const found = yield* ring.since(query.after ?? -1, query.waitMs ?? 0)
    return { ...found, capacity: ring.capacity }
  })

/** `/v1/calls/recent` and `/v1/ui/changes`. */
export const CallsLive = HttpApiBuilder.group(Api, "calls", (handlers) =>
  handlers
    .handle("recent", ({ urlParams }) => recent(urlParams))
    .handle("changes", ({ urlParams }) => OwnerChanges.changes(urlParams)))
