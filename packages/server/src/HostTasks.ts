/**
 * Tasks as hosts see them: a call that outlives its request. mcpx-fx decides per call (the 2026-07-28
 * tasks extension lets the server decide): a tool that supports tasks becomes one at once; every
 * other call becomes one when it has run longer than `afterMs`, and until then answers in its
 * request as it always did. The call itself runs in this service's scope, not the request's, so
 * a host that hangs up after the `CreateTaskResult` loses nothing.
 *
 * The store keeps each task's status and outcome (durable: a restart keeps finished tasks, and
 * the lease in TaskStore fails the ones a dead process held). The live call behind a `working` or
 * `input_required` task stays here, in `live`: an `input_required` round parks the upstream's own
 * state, and `tasks/update` runs the next round with the host's answers — the same retry a
 * modern host makes for an `input_required` result, made by mcpx-fx on the task's behalf.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import { isTerminal } from "@mcpx-fx/protocol/Tasks"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import { type Caller, InputRefused } from "./Backend.js"
import { Fleet, type FleetService } from "./Fleet.js"
import { type HandleError, InvalidParams, TaskEnded } from "./ServerErrors.js"
import * as TaskForwarding from "./TaskForwarding.js"
import { type Abandon, type Live, type Round, rounds } from "./internal/TaskLive.js"
import * as TaskQuestions from "./internal/TaskQuestions.js"
import * as TaskShapes from "./internal/TaskShapes.js"
import type { TaskPolicy } from "./TaskPolicy.js"
import { type TaskRow, TaskStore, type TaskStoreError, type TaskUpdate } from "./TaskStore.js"

/** Why a task that was running reads `failed` after its process went away. */
export const InterruptedMessage = "mcpx-fx stopped while the task ran; the call's outcome is unknown"

/**
 * One round of the call behind a task: the feature run with this round's answers (none on the
 * first), its result shaped for a modern host; an `input_required` result keeps the upstream's
 * own `requestState` (never handed out: the next round is mcpx-fx's to make).
 */
export type { Abandon, Round } from "./internal/TaskLive.js"

/**
 * What a host sees of a task: the 2026-07-28 extension's for a modern caller, 2025-11-25's core
 * tasks for a legacy one, from the same rows.
 */
export class HostTasks extends Context.Tag("@mcpx-fx/server/HostTasks")<HostTasks, {
  /**
   * Runs a call as a task at once when `immediate` (a 2025-11-25 `params.task`, or a tool that
   * supports tasks), else in the request until `afterMs` or until the upstream makes it a task,
   * then as a task. The result is the call's own, or a `CreateTaskResult` in the caller's era.
   * `ttlMs`: the retention a 2025-11-25 caller asked for, held to the policy's. `abandon` ends
   * what an `input_required` round left waiting upstream, when the task is cancelled then.
   */
  readonly call: (
    caller: Caller,
    method: string,
    immediate: boolean,
    round: Round,
    ttlMs?: number,
    abandon?: Abandon
  ) => Effect.Effect<JsonObject, HandleError>
  /** `tasks/get`: the extension's detailed task (`resultType: "complete"`), or 2025-11-25's task. */
  readonly get: (caller: Caller, taskId: string) => Effect.Effect<JsonObject, HandleError>
  /** `tasks/update` (extension): answers an `input_required` task's questions; keys not outstanding are ignored. */
  readonly update: (caller: Caller, taskId: string, inputResponses: JsonObject) => Effect.Effect<JsonObject, HandleError>
  /** `tasks/cancel`: stops the call; the extension acknowledges, 2025-11-25 answers the task as it now is. */
  readonly cancel: (caller: Caller, taskId: string) => Effect.Effect<JsonObject, HandleError>
  /** `tasks/result` (2025-11-25): waits for the end, then the call's own result or its error. */
  readonly result: (caller: Caller, taskId: string) => Effect.Effect<JsonObject, HandleError>
  /** `tasks/list` (2025-11-25): the caller's tasks, newest first, a page at a time. */
  readonly list: (caller: Caller, cursor: string | undefined) => Effect.Effect<JsonObject, HandleError>
  /**
   * Every task's row as this process writes it from now on (a status or its payload changed), of
   * every owner (whoever reads filters), for the hosts told rather than polling (TaskNotices.ts).
   * Not the creation (its answer carries the task), nor what another process writes. A reader
   * that falls behind loses the oldest rows, never memory.
   */
  readonly statuses: Effect.Effect<Queue.Dequeue<TaskRow>, never, Scope.Scope>
}>() {
  /** Tasks kept in the TaskStore under `policy`. */
  static readonly layer = (policy: TaskPolicy): Layer.Layer<HostTasks, TaskStoreError, TaskStore> => Layer.scoped(HostTasks, make(policy, undefined))

  /** As `layer`, in a fleet: an update or cancel of a task another process runs goes to it. */
  static readonly layerFleet = (policy: TaskPolicy): Layer.Layer<HostTasks, TaskStoreError, TaskStore | Fleet> =>
    Layer.scoped(HostTasks, Effect.flatMap(Fleet, (fleet) => make(policy, fleet)))
}

/** What a 2025-11-25 task waiting for its host's answer says (its host collects the question with `tasks/result`). */
export const QuestionWaiting = "waiting for an answer: the question comes with tasks/result"

/** How many tasks one `tasks/list` page holds. */
export const ListPage = 50

/** How far a reader of `statuses` may lag before losing the oldest rows (any later row of a task is whole). */
export const StatusBacklog = 1_024

/** The acknowledgement `tasks/update` and `tasks/cancel` answer. */
const ack: JsonObject = { resultType: "complete" }

/** Who a task belongs to: the caller's session identity; callers without one share the id as a bearer token. */
export const ownerOf = (caller: Caller): string => caller.sessionId ?? ""

/**
 * 128 random bits, url-safe, after a letter: one base64url id in 64 began with "-", and a
 * command line reads such a word as an option (`mcpx-fx tasks result -Wx…` failed).
 */
export const newTaskId = (): string => `t${randomBytes(16).toString("base64url")}`

const make = (policy: TaskPolicy, fleet: FleetService | undefined) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const scope: Scope.Scope = yield* Effect.scope
    const live = new Map<string, Live>()
    const written = yield* PubSub.sliding<TaskRow>(StatusBacklog)

    /** Moves a task on in the store, and tells whoever follows `statuses` of the row it now is. */
    const record = (taskId: string, update: TaskUpdate): Effect.Effect<Option.Option<TaskRow>, TaskStoreError> =>
      Effect.tap(store.update(taskId, update), (row) => (Option.isSome(row) ? PubSub.publish(written, row.value) : Effect.void))

    const sweep = Effect.catchAll(store.sweep(policy.leaseMs, InterruptedMessage), (e) => Effect.logWarning(e.message))
    yield* sweep
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(Duration.millis(Math.max(1_000, Math.floor(policy.leaseMs / 3))))))
    // A clean stop fails what it cannot finish rather than leaving it to the next sweep. Added
    // after the fibers' scope entries, so it runs once they are interrupted.
    yield* Effect.addFinalizer(() =>
      Effect.andThen(
        Effect.forEach([...live.values()], (l) => (l.fiber === undefined ? Effect.void : Fiber.interrupt(l.fiber)), { discard: true }),
        Effect.catchAll(store.release(InterruptedMessage), (e) => Effect.logWarning(e.message))
      )
    )

    /** The owner's task, or -32602 as for an id nobody issued. */
    const owned = (caller: Caller, taskId: string) =>
      Effect.flatMap(
        store.get(taskId, ownerOf(caller)),
        Option.match({
          onNone: () => Effect.fail(new InvalidParams({ detail: `unknown task ${JSON.stringify(taskId)}` })),
          onSome: Effect.succeed
        })
      )

    const { answer, follow } = rounds({ live, record, scope })

    const admit = (owner: string) =>
      Effect.gen(function*() {
        const mine = yield* store.active(owner)
        if (mine >= policy.perCaller) return `this caller has ${mine} unfinished tasks (tasks.perCaller is ${policy.perCaller})`
        const all = yield* store.active()
        if (all >= policy.total) return `mcpx-fx holds ${all} unfinished tasks (tasks.total is ${policy.total})`
        return undefined
      })

    /** A task's row, `working`, before anything of its call can be written. */
    const create = (caller: Caller, method: string, ttlMs: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const row: TaskRow = {
          taskId: newTaskId(),
          owner: ownerOf(caller),
          method,
          status: "working",
          createdAt: now,
          updatedAt: now,
          ttlMs,
          pollIntervalMs: policy.pollIntervalMs,
          instance: store.instance
        }
        yield* store.create(row)
        return row
      })

    /** Makes a running round the task's: its live entry, and the fiber that records its end. */
    const adopt = (
      row: TaskRow,
      caller: Caller,
      round: Round,
      fiber: Fiber.RuntimeFiber<JsonObject, HandleError>,
      abandon: Abandon | undefined,
      questions?: TaskQuestions.TaskQuestions
    ) =>
      Effect.gen(function*() {
        live.set(row.taskId, { caller, round, fiber, requestState: undefined, outstanding: {}, queued: {}, questions, abandon })
        yield* follow(row.taskId, fiber)
        return TaskShapes.created(row, caller.era)
      })

    /** While a 2025-11-25 task's question waits, the task reads `input_required`. */
    const asking = (taskId: string) => (waiting: boolean) =>
      Effect.ignore(record(taskId, waiting ? { status: "input_required", statusMessage: QuestionWaiting } : { status: "working" }))

    // The call runs detached from its request; the request's stream is not the task's. Nor is
    // its tool's resolution, made for the request's own round: each later round resolves anew.
    const detached = (caller: Caller): Caller => {
      const { notify: _notify, onTask: _onTask, questions: _questions, resolved: _resolved, retry: _retry, ...rest } = caller
      return rest
    }

    const call = (
      caller: Caller,
      method: string,
      immediate: boolean,
      round: Round,
      asked?: number,
      abandon?: Abandon
    ): Effect.Effect<JsonObject, HandleError> =>
      Effect.gen(function*() {
        const ttlMs = asked === undefined ? policy.ttlMs : Math.min(policy.ttlMs, Math.max(0, Math.round(asked)))
        const refused = yield* admit(ownerOf(caller))
        if (immediate) {
          if (refused !== undefined) return yield* new InputRefused({ reason: "tasks", detail: refused, clientError: false })
          const row = yield* create(caller, method, ttlMs)
          // A 2025-11-25 task's questions wait for its host's `tasks/result` (or go on stdio).
          const questions = caller.era === "legacy"
            ? yield* TaskQuestions.make(row.taskId, caller.connectionQuestions === true ? caller.questions : undefined, asking(row.taskId))
            : undefined
          const roundCaller = questions === undefined ? detached(caller) : { ...detached(caller), questions: questions.channel }
          // A host's own retry (the last round of an MRTR exchange) keeps its answers; this
          // round, run for the request, keeps the request's resolution of the tool.
          const opening = caller.resolved === undefined ? roundCaller : { ...roundCaller, resolved: caller.resolved }
          const fiber = yield* Effect.forkIn(round(opening, caller.retry), scope)
          return yield* adopt(row, roundCaller, round, fiber, abandon, questions)
        }
        // Until it is a task the call belongs to its request, whose stream takes its progress. An
        // upstream that makes it a task of its own (onTask) says it will run on: no need to wait.
        const promoted = yield* Deferred.make<void>()
        const first: Caller = { ...caller, onTask: Effect.asVoid(Deferred.succeed(promoted, undefined)) }
        const fiber = yield* Effect.forkIn(round(first, undefined), scope)
        const early = yield* Effect.onInterrupt(
          Effect.race(
            Effect.map(Fiber.await(fiber), Option.some),
            Effect.as(Effect.race(Deferred.await(promoted), Effect.sleep(Duration.millis(policy.afterMs))), Option.none())
          ),
          () => Fiber.interrupt(fiber)
        )
        if (Option.isSome(early)) return yield* early.value
        // Past the bounds the call keeps running in its request, as for a host without tasks.
        if (refused !== undefined) return yield* Effect.onInterrupt(Fiber.join(fiber), () => Fiber.interrupt(fiber))
        return yield* adopt(yield* create(caller, method, ttlMs), detached(caller), round, fiber, abandon)
      })

    const update = (caller: Caller, taskId: string, inputResponses: JsonObject) =>
      Effect.gen(function*() {
        const row = yield* owned(caller, taskId)
        const entry = live.get(taskId)
        if (isTerminal(row.status) || entry === undefined) return ack
        // While a round runs, answers wait for the questions it may ask next.
        if (entry.fiber !== undefined) {
          entry.queued = { ...entry.queued, ...inputResponses }
          return ack
        }
        // Keys that name no outstanding question are ignored, whatever their value.
        const answers = TaskShapes.pick(inputResponses, Object.keys(entry.outstanding))
        if (Object.keys(answers).length === 0) return ack
        yield* answer(taskId, entry, answers)
        return ack
      })

    const cancel = (caller: Caller, taskId: string) =>
      Effect.gen(function*() {
        const row = yield* owned(caller, taskId)
        const after = isTerminal(row.status)
          ? row
          : Option.getOrElse(yield* record(taskId, { status: "cancelled", statusMessage: "cancelled by the caller" }), () => row)
        const entry = live.get(taskId)
        if (!isTerminal(row.status)) live.delete(taskId)
        if (entry?.fiber !== undefined && !isTerminal(row.status)) yield* Fiber.interruptFork(entry.fiber)
        // Waiting for answers, no round runs: what the last one left waiting upstream ends too.
        const parked = entry?.fiber === undefined ? entry?.requestState : undefined
        if (parked !== undefined && entry?.abandon !== undefined) yield* Effect.forkIn(entry.abandon(parked), scope)
        // 2025-11-25 answers the task itself; a task that had already ended is an error there.
        if (caller.era === "modern") return ack
        if (isTerminal(row.status)) return yield* new InvalidParams({ detail: `task ${JSON.stringify(taskId)} has already ${row.status}` })
        return TaskShapes.legacy(after)
      })

    /**
     * Waits until the task is terminal: woken by what this process writes of it, and reading the
     * store at least every 250 ms, so a task another process settles is seen too.
     */
    const finished = (caller: Caller, taskId: string): Effect.Effect<TaskRow, HandleError> =>
      Effect.scoped(Effect.gen(function*() {
        const writes = yield* PubSub.subscribe(written)
        const next = Effect.repeat(Queue.take(writes), { until: (row) => row.taskId === taskId })
        const poll = Effect.sleep(Duration.millis(Math.min(policy.pollIntervalMs, 250)))
        for (;;) {
          const row = yield* owned(caller, taskId)
          if (isTerminal(row.status)) return row
          yield* Effect.race(next, poll)
        }
      }))

    // A 2025-11-25 host collects its task's questions here: they go out on this request's stream
    // while it waits.
    const result = (caller: Caller, taskId: string) =>
      Effect.gen(function*() {
        yield* owned(caller, taskId)
        const questions = live.get(taskId)?.questions
        const row = questions !== undefined && caller.questions !== undefined
          ? yield* Effect.raceFirst(finished(caller, taskId), questions.serve(caller.questions))
          : yield* finished(caller, taskId)
        if (row.status === "completed") return TaskShapes.payload(row)
        const e = row.status === "failed" ? TaskShapes.errorOf(row) : { code: ErrorCode.InternalError, message: "the task was cancelled" }
        return yield* new TaskEnded({ error: e })
      })

    const list = (caller: Caller, cursor: string | undefined) =>
      store.list(ownerOf(caller), ListPage, cursor).pipe(
        Effect.mapError((e): HandleError =>
          e.operation === "list tasks" && e.reason.startsWith("unknown cursor") ? new InvalidParams({ detail: `${e.reason} ${JSON.stringify(cursor)}` }) : e
        ),
        Effect.map((page): JsonObject => ({
          tasks: page.tasks.map(TaskShapes.legacy),
          ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor })
        }))
      )

    const routed = fleet === undefined ? { update, cancel } : yield* TaskForwarding.routed(fleet, { update, cancel }, {
      instance: store.instance,
      isLive: (taskId) => live.has(taskId),
      owned,
      failGone: (taskId) => record(taskId, { status: "failed", error: { code: ErrorCode.InternalError, message: TaskForwarding.GoneMessage } }),
      legacyShape: TaskShapes.legacy
    })
    return HostTasks.of({
      call,
      get: (caller, taskId) =>
        Effect.map(owned(caller, taskId), (row) => caller.era === "modern" ? { ...TaskShapes.detailed(row), resultType: "complete" } : TaskShapes.legacy(row)),
      update: routed.update,
      cancel: routed.cancel,
      result,
      list,
      statuses: PubSub.subscribe(written)
    })
  })
