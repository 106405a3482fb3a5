/**
 * The stdio host transport: newline-delimited JSON-RPC between one host and the Server, in every
 * revision (seed 002, "stdio, every revision").
 *
 * - Requests run concurrently, each in its own fiber, so a `notifications/cancelled` can be read
 *   while the request it names is still running; it interrupts that fiber (which reaches the
 *   upstream call through the Backend's finalizers) and the reply is never written.
 * - `initialize` and notifications are handled in line: a notification must land before whatever
 *   follows it, and `initialize` settles what every later reply looks like.
 * - Notifications are never answered, not even with an error.
 * - Batches follow the connection's negotiated revision (2025-03-26 before any `initialize`): only
 *   2025-03-26 has them. Their reply is one array; `initialize` inside one is an error element.
 *   A batch holds at most `maxBatch` messages and runs `BatchConcurrency` of its requests at a
 *   time; lines after it are read and served meanwhile.
 * - A frame nested too deeply, or with a numeric id no number holds exactly, is refused (-32600).
 * - At end of input, requests in flight get the drain duration to answer, then are interrupted.
 *   When the process is told to stop (`stop`, SIGTERM) the host is still listening: reading stops
 *   as at end of input and requests get the same drain, but what still runs after it is answered
 *   with the shutdown error (-32603), and an open listen is closed with its completion result.
 * - Output is one JSON-RPC message (or batch) per line, each handed whole to `write` in the order
 *   it was sent, so frames never interleave; nothing else is ever written to it.
 * - A legacy request's Backend may ask the host questions (elicitation, sampling, roots): they go
 *   out as server→client requests and the host's responses come back by id.
 * - Changes reach the host (seed 002: "after a legacy initialize, list_changed is forwarded"): once
 *   the connection is initialized, every list_changed the Server declares and the updates of the
 *   resources it subscribed to; a modern `subscriptions/listen` stays open, its notifications
 *   sharing stdout with everything else, until the host cancels it. At end of input an open listen
 *   has nothing left to answer, so it is ended at once rather than drained.
 * - A 2025-11-25 host is told of its own tasks' changes (`notifications/tasks/status`) once it is
 *   initialized, as it is of list changes.
 */
import { Keyed } from "@mcpx-fx/cancel/InFlight"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as ProtocolSubscriptions from "@mcpx-fx/protocol/Subscriptions"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { Backend, type Question, type QuestionChannel, QuestionRefused } from "./Backend.js"
import { type Hop, HostTrace } from "./HostTrace.js"
import { BatchConcurrency, DefaultMaxBatch } from "./Limits.js"
import { type Connection, makeConnection, negotiatedRevision, type RequestContext, Server } from "./Server.js"
import { shutdownError } from "./Shutdown.js"
import * as Subscriptions from "./Subscriptions.js"
import * as SessionRequests from "./internal/SessionRequests.js"

/** How a stdio connection behaves. */
export interface StdioOptions {
  /** How long requests in flight at end of input may still answer (`transport.stdioDrain`). */
  readonly drain: Duration.DurationInput
  /** The connection's id: the fallback session identity of its legacy callers. */
  readonly connectionId?: string
  /** `transport.maxBatch`: the most messages one batch may hold (default `DefaultMaxBatch`). */
  readonly maxBatch?: number
  /**
   * Completes when the process is told to stop: reading ends, requests get the drain, and the
   * ones still running are cancelled and answered with the shutdown error rather than dropped.
   */
  readonly stop?: Effect.Effect<void>
}

/** How long the shutdown answers have to be written once the drain after a stop is over. */
const AnswerWindow = Duration.seconds(1)

/** Serves one stdio connection. */
export class StdioHost extends Context.Tag("@mcpx-fx/server/StdioHost")<StdioHost, {
  /**
   * Reads lines from `input` until it ends, writes every reply with `write` (one line each, no
   * newline included), and returns once the drain is over. Fails only if `input` does.
   *
   * `write` may be called again before an earlier call has completed (each request answers in its
   * own fiber): it must put its line out whole, and in the order it was called.
   */
  readonly serve: <E>(
    input: Stream.Stream<string, E>,
    write: (line: string) => Effect.Effect<void>,
    options: StdioOptions
  ) => Effect.Effect<void, E>
}>() {
  /** The stdio host over the Server, with the Backend's changes for its hosts. */
  static readonly layer: Layer.Layer<StdioHost, never, Server | Backend> = Layer.effect(
    StdioHost,
    Effect.map(
      Effect.all([Server, Backend]),
      ([server, backend]) => StdioHost.of({ serve: (input, write, options) => serve(server, backend, input, write, options) })
    )
  )
}

type ServerService = Context.Tag.Service<Server>
type BackendService = Context.Tag.Service<Backend>

const cancelledRequestId = (n: JsonRpc.Notification): JsonRpc.RequestId | undefined => {
  const id = n.params?.requestId
  return typeof id === "string" || typeof id === "number" ? id : undefined
}

const serve = <E>(
  server: ServerService,
  backend: BackendService,
  input: Stream.Stream<string, E>,
  write: (line: string) => Effect.Effect<void>,
  options: StdioOptions
): Effect.Effect<void, E> =>
  // Every request of the connection is told it came on a pipe (its span's network.transport), once.
  Effect.provideService(
    Effect.scoped(Effect.gen(function*() {
      const connection: Connection = yield* makeConnection(options.connectionId ?? "stdio")
      // Not FiberMaps: their Map churns once per request (@mcpx-fx/cancel/InFlight).
      const requests = yield* SessionRequests.make
      // Open `subscriptions/listen` requests: cancelled like the others, but never drained.
      const listens = yield* SessionRequests.make
      const watches = yield* Subscriptions.makeWatches
      const batches = yield* FiberSet.make()
      const limits: JsonRpc.FrameLimits = { maxBatch: options.maxBatch ?? DefaultMaxBatch }
      // Not a Map: it churns once per question (@mcpx-fx/cancel/InFlight).
      const questions = new Keyed<Deferred.Deferred<JsonObject, QuestionRefused>>()
      let questionSeq = 0

      // A frame is written whole or not at all, whatever interrupts the fiber that wrote it. No lock
      // around `write`: it keeps frames whole and in order itself, and under load a semaphore's
      // waiters were more than a third of what a call allocated (docs/performance.md).
      const send = (body: JsonRpc.Message | ReadonlyArray<JsonRpc.Message>): Effect.Effect<void> => Effect.uninterruptible(write(JSON.stringify(body)))

      // Made once per connection, not per question (docs/performance.md, What a call allocates).
      const ask: QuestionChannel = Effect.fnUntraced(function*(question: Question) {
        const id = `mcpx-fx-q-${++questionSeq}`
        const answer = yield* Deferred.make<JsonObject, QuestionRefused>()
        questions.set(id, answer)
        yield* send(JsonRpc.request(id, question.method, question.params))
        return yield* Deferred.await(answer).pipe(
          // A call cancelled while its question is open tells the host to stop asking.
          Effect.onInterrupt(() => send(JsonRpc.notification(Method.NotificationsCancelled, { requestId: id, reason: "the call was cancelled" }))),
          Effect.ensuring(Effect.sync(() => questions.delete(id)))
        )
      })

      const context: RequestContext = {
        connection,
        questions: ask,
        connectionQuestions: true,
        notify: (n) => send(n),
        subscriptions: { notify: (n) => send(n), watches }
      }

      // A legacy host hears of changes only once it is initialized; a modern one only through listen.
      // Subscribing runs beside reading: a Backend still being built (BackendWhenReady) must not
      // hold up the host's `initialize`.
      const initialized = Effect.map(Ref.get(connection.negotiated), (n) => Option.isSome(n) && n.value.initialized)
      yield* Effect.forkScoped(Subscriptions.forwardToLegacy(backend, server.options.capabilities, watches, initialized, send))
      yield* Effect.forkScoped(server.followTasks(connection, send))

      const answerQuestion = (response: JsonRpc.Response): Effect.Effect<void> => {
        const id = JsonRpc.idOf(response)
        const waiting = id === undefined ? undefined : questions.get(String(id))
        if (waiting === undefined) return Effect.void
        return JsonRpc.isSuccess(response)
          ? Deferred.succeed(waiting, response.result)
          : JsonRpc.isErrorResponse(response)
          ? Deferred.fail(waiting, new QuestionRefused({ code: response.error.code, message: response.error.message }))
          : Effect.void
      }

      const handle = (message: JsonRpc.Message) => server.handle(message, context)

      // A stop ends reading and, once its drain is over, interrupts what still runs: each such
      // request is answered with the shutdown error (`pastDrain` tells that interruption from a
      // cancellation). Not a race per request against the stop: that forked two fibers per call.
      const stopped = yield* Deferred.make<void>()
      let pastDrain = false
      if (options.stop !== undefined) yield* Effect.forkScoped(Effect.zipRight(options.stop, Deferred.succeed(stopped, undefined)))

      /** A request's reply; an open `subscriptions/listen` is completed by a stop. */
      const answer = (
        request: JsonRpc.Request,
        handled: Effect.Effect<JsonRpc.Response | undefined> = handle(request)
      ): Effect.Effect<JsonRpc.Response | undefined> =>
        request.method === Method.SubscriptionsListen
          ? Effect.raceFirst(handled, Effect.as(Deferred.await(stopped), ProtocolSubscriptions.closed(request.id)))
          : handled

      // Ids key the cancellation map, so two live requests must not share one.
      const duplicate = (id: JsonRpc.RequestId) =>
        JsonRpc.failure(id, ErrorCode.InvalidRequest, `Invalid Request: id ${JSON.stringify(id)} is already in flight`)

      // Made once per connection, not per request (docs/performance.md, What a call allocates).
      const runRequest: (request: JsonRpc.Request) => Effect.Effect<void> = Effect.fnUntraced(
        function*(request: JsonRpc.Request) {
          if (request.method === Method.Initialize) {
            const reply = yield* handle(request)
            if (reply !== undefined) yield* send(reply)
            return
          }
          if (requests.has(request.id) || listens.has(request.id)) return yield* send(duplicate(request.id))
          yield* (request.method === Method.SubscriptionsListen ? listens : requests).fork(
            request.id,
            Effect.flatMap(answer(request), (reply) => (reply === undefined ? Effect.void : send(reply))).pipe(
              Effect.onInterrupt(() => (pastDrain ? send(shutdownError(request.id)) : Effect.void))
            )
          )
        }
      )

      const runNotification = (n: JsonRpc.Notification): Effect.Effect<void> => {
        if (n.method === Method.NotificationsCancelled) {
          const id = cancelledRequestId(n)
          return id === undefined ? Effect.void : Effect.zipRight(requests.cancel(id), listens.cancel(id))
        }
        return Effect.asVoid(handle(n))
      }

      const runSingle = (message: JsonRpc.Message): Effect.Effect<void> =>
        JsonRpc.isRequest(message)
          ? runRequest(message)
          : JsonRpc.isNotification(message)
          ? runNotification(message)
          : JsonRpc.isResponse(message)
          ? answerQuestion(message)
          : Effect.void

      // A batch's requests run in the same fiber map as single ones, so a notifications/cancelled
      // reaches them too; a cancelled element is left out of the reply array.
      const batchElement = (
        slots: Effect.Semaphore,
        element: Either.Either<JsonRpc.Parsed, JsonRpc.FrameError>
      ): Effect.Effect<Effect.Effect<ReadonlyArray<JsonRpc.Response>>> =>
        Either.match(element, {
          onLeft: (e) => Effect.succeed(Effect.succeed([JsonRpc.withNullId(JsonRpc.frameErrorResponse(e))])),
          onRight: ({ message }) => {
            if (JsonRpc.isResponse(message)) return Effect.as(answerQuestion(message), Effect.succeed([]))
            if (!JsonRpc.isRequest(message)) return Effect.succeed(Effect.succeed([]))
            if (message.method === Method.Initialize) {
              return Effect.succeed(
                Effect.succeed([JsonRpc.failure(message.id, ErrorCode.InvalidRequest, "Invalid Request: initialize must not be part of a batch")])
              )
            }
            return Effect.suspend(() =>
              requests.has(message.id)
                ? Effect.succeed(Effect.succeed([duplicate(message.id)]))
                : Effect.map(
                  requests.fork(message.id, answer(message, slots.withPermits(1)(handle(message)))),
                  (fiber) =>
                    Effect.map(Fiber.await(fiber), (exit) =>
                      Exit.isSuccess(exit)
                        ? exit.value === undefined ? [] : [exit.value]
                        : pastDrain && Exit.isInterrupted(exit)
                        ? [shutdownError(message.id)]
                        : [])
                )
            )
          }
        })

      const runBatch: (elements: ReadonlyArray<Either.Either<JsonRpc.Parsed, JsonRpc.FrameError>>) => Effect.Effect<void> = Effect.fnUntraced(
        function*(elements: ReadonlyArray<Either.Either<JsonRpc.Parsed, JsonRpc.FrameError>>) {
          const revision = (yield* negotiatedRevision(connection)) ?? "2025-03-26"
          if (!Revision.allowsBatches(revision)) {
            return yield* send(JsonRpc.withNullId(JsonRpc.failure(undefined, ErrorCode.InvalidRequest, `Invalid Request: ${revision} has no batches`)))
          }
          // Notifications keep their order and land before the requests of the same batch start.
          for (const element of elements) {
            if (Either.isRight(element) && JsonRpc.isNotification(element.right.message)) yield* runNotification(element.right.message)
          }
          const slots = yield* Effect.makeSemaphore(BatchConcurrency)
          const replies = yield* Effect.forEach(
            elements.filter((e) => !(Either.isRight(e) && JsonRpc.isNotification(e.right.message))),
            (element) => batchElement(slots, element)
          )
          if (replies.length === 0) return
          yield* FiberSet.run(
            batches,
            Effect.flatMap(Effect.all(replies, { concurrency: "unbounded" }), (all) => {
              const answered = all.flat()
              return answered.length === 0 ? Effect.void : send(answered)
            })
          )
        }
      )

      const onLine = (line: string): Effect.Effect<void> => {
        const text = line.trim()
        if (text.length === 0) return Effect.void
        return Either.match(JsonRpc.decodeHostFrame(text, limits), {
          onLeft: (e) => send(JsonRpc.withNullId(JsonRpc.frameErrorResponse(e))),
          onRight: (frame) => (frame._tag === "Single" ? runSingle(frame.parsed.message) : runBatch(frame.elements))
        })
      }

      // A stop ends reading wherever it is; the lines already read are handled as usual.
      const read = yield* Effect.either(Effect.raceFirst(Stream.runForEach(input, onLine), Deferred.await(stopped)))
      const told = yield* Deferred.isDone(stopped)

      // End of input: what is in flight may still answer within the drain, then it is cancelled.
      // After a stop the listens have closed themselves; at end of input nobody waits for them.
      if (!told) yield* listens.cancelAll
      const inFlight = Effect.all([requests.awaitEmpty, FiberSet.awaitEmpty(batches), listens.awaitEmpty], {
        discard: true
      })
      yield* inFlight.pipe(Effect.timeoutOption(Duration.decode(options.drain)), Effect.ignore)
      if (told) {
        // The host is still listening: what runs yet is interrupted and answered, not dropped.
        pastDrain = true
        yield* Effect.zipRight(requests.cancelAll, inFlight).pipe(Effect.timeoutOption(AnswerWindow), Effect.ignore)
      }
      yield* Effect.all([requests.cancelAll, FiberSet.clear(batches), listens.cancelAll], { discard: true })
      if (Either.isLeft(read)) return yield* Effect.fail(read.left)
    })),
    HostTrace,
    StdioHop
  )

const StdioHop: Hop = { transport: "pipe" }
