/**
 * `GET /v1/calls/recent`: the last tool calls the daemon ran (RecentCalls.ts), newest first, with
 * who made each, how long it took and how it ended. It names sessions and clients, and says what
 * every caller did, so like the task list it is for the daemon's owner only: the unix socket, or
 * the live page holding the owner secret (OwnerAccess.ts).
 *
 * `after` and `waitMs` make it a long poll: with `after` the newest number already seen, the
 * request waits (up to `waitMs`) for a newer call, so a reader follows calls as they end.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import { RecentCall } from "./RecentCalls.js"

/** The longest a request may wait for a newer call. */
export const MaxWaitMs = 60_000

/** `GET /v1/calls/recent?after=&waitMs=`: without `waitMs` it answers at once. */
export const RecentQuery = Schema.Struct({
  after: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative()), { exact: true }),
  waitMs: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, MaxWaitMs)), { exact: true })
})

/** The calls after `after` (every one kept, without it), newest first; `last` is the newest number. */
export const RecentCallsListing = Schema.Struct({
  calls: Schema.Array(RecentCall),
  last: Schema.Number,
  /** How many calls the daemon keeps. */
  capacity: Schema.Number
})

/** Over TCP without the owner secret: the calls are the owner's to see. */
export class CallsForbidden extends Schema.TaggedError<CallsForbidden>("@mcpx-fx/daemon/CallsApi/CallsForbidden")(
  "CallsForbidden",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 403 })
) {
  override get message(): string {
    return this.detail
  }
}

/** `GET /v1/ui/changes?after=&waitMs=`: without `waitMs` (or with another `after`) it answers at once. */
export const ChangesQuery = Schema.Struct({
  after: Schema.optionalWith(Schema.String, { exact: true }),
  waitMs: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, MaxWaitMs)), { exact: true })
})

/** The version of the owner's views (open questions, tasks): a new one means they changed. */
export const Changes = Schema.Struct({ version: Schema.String })

/** Recent calls, and the live page's word that questions or tasks changed (OwnerChanges.ts). */
export class CallsGroup extends HttpApiGroup.make("calls")
  .add(HttpApiEndpoint.get("recent", "/calls/recent").setUrlParams(RecentQuery).addSuccess(RecentCallsListing).addError(CallsForbidden))
  .add(HttpApiEndpoint.get("changes", "/ui/changes").setUrlParams(ChangesQuery).addSuccess(Changes).addError(CallsForbidden))
{}
