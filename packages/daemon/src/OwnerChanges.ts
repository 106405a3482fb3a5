/**
 * What `GET /v1/ui/changes` does (CallsApi.ts has the route): tells the live page when the owner's
 * views (open questions, tasks) have changed, so it reads them only then, instead of asking for
 * both every 1.5 s. A long poll: the page names the `version` it shows, and is answered as soon as
 * the views are at another one, or when `waitMs` is over.
 *
 * A waiting request looks again whenever something that changes them happens: a task's status
 * (HostTasks' `statuses`), a question event, a call ending or a `/v1` call asking (the ring's
 * `nudged`). A question of a `/v1/ask` call or a task's creation tell nothing of themselves (that
 * would take a signal from PendingCalls and HostTasks), so a waiting request also looks once a
 * second: in memory, only while a page waits, and the page is answered only when something differs.
 */
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import * as Redact from "@mcpx-fx/gateway/Redact"
import { HostTasks } from "@mcpx-fx/server/HostTasks"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ask from "./Ask.js"
import { CallsForbidden, type ChangesQuery } from "./CallsApi.js"
import { RecentCalls } from "./RecentCalls.js"
import * as TaskRoutes from "./TaskRoutes.js"

const forbidden = new CallsForbidden({
  detail: "questions and tasks are shown only to the daemon's owner: on its unix socket (the CLI), or to the live page opened with `mcpx-fx ui`"
})

/** How often a waiting request looks even when nothing said there was a change. */
export const Fallback = Duration.seconds(1)

// FNV-1a over the views' text: a short version that differs when they do.
const hash = (text: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(36) + text.length.toString(36)
}

/** The version of what the page shows of questions and tasks. */
const version = Effect.gen(function*() {
  const questions = yield* Effect.flatMap(PendingCalls, (pending) => Ask.openQuestions(pending, { owner: true, call: undefined }))
  const tasks = yield* Effect.orElseSucceed(TaskRoutes.list({}), () => ({ tasks: [] }))
  return hash(JSON.stringify([
    questions.questions.map((q) => q.id),
    tasks.tasks.map((t) => [t.taskId, t.status, t.lastUpdatedAt, t.statusMessage ?? ""])
  ]))
})

/**
 * The views' version once it differs from `after`: looked at again at each thing that may have
 * changed them, or after `Fallback`, subscribed to those for the whole wait.
 */
const changedFrom = (after: string) =>
  Effect.scoped(Effect.gen(function*() {
    const statuses = yield* Effect.flatMap(HostTasks, (tasks) => tasks.statuses)
    const events = yield* Effect.flatMap(PendingCalls, (pending) => pending.events)
    const ring = yield* RecentCalls
    const somethingHappened = Effect.raceAll<Effect.Effect<unknown>>([
      Queue.take(statuses),
      Queue.take(events),
      Effect.sleep(Fallback),
      ring.nudged
    ])
    return yield* Effect.repeat(Effect.zipRight(somethingHappened, version), { until: (v) => v !== after })
  }))

/** The views' version once it is not `after`, or as it is when `waitMs` is over. */
export const changes = (query: typeof ChangesQuery.Type) =>
  Effect.gen(function*() {
    if (!(yield* FiberRef.get(Redact.RawForOwner))) return yield* forbidden
    const now = yield* version
    const waitMs = query.waitMs ?? 0
    if (query.after !== now || waitMs === 0) return { version: now }
    const found = yield* Effect.timeoutOption(changedFrom(now), waitMs)
    return { version: Option.getOrElse(found, () => now) }
  })
