/**
 * A legacy session's requests in flight: a forked request and one run in place are both known by
 * id while they run and forgotten when they end; cancelling either interrupts it (an in-place one
 * ends with what its caller said to end with), and the session's end interrupts and waits for
 * everything, after which nothing new runs.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as SessionRequests from "../src/internal/SessionRequests.js"

const cancelled = Effect.die("cancelled")

/** The defect a fiber died with, if it died. */
const defectOf = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) ? Cause.dieOption(exit.cause).pipe((o) => (o._tag === "Some" ? o.value : undefined)) : undefined

describe("SessionRequests", () => {
  it.scoped("server/sessionRequests/a forked request is known by id until it ends", () =>
    Effect.gen(function*() {
      const requests = yield* SessionRequests.make
      const gate = yield* Deferred.make<void>()
      const fiber = yield* requests.fork("a", Effect.as(Deferred.await(gate), "done"))
      assert.isTrue(requests.has("a"))
      assert.strictEqual(requests.size(), 1)
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(fiber), "done")
      assert.isFalse(requests.has("a"))
      assert.strictEqual(requests.size(), 0)
    }))

  it.scoped("server/sessionRequests/cancelling a forked request interrupts it and waits for it", () =>
    Effect.gen(function*() {
      const requests = yield* SessionRequests.make
      const started = yield* Deferred.make<void>()
      const stopped = yield* Deferred.make<void>()
      const fiber = yield* requests.fork(
        7,
        Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(Effect.onInterrupt(() => Deferred.succeed(stopped, undefined)))
      )
      yield* Deferred.await(started)
      yield* requests.cancel(7)
      // The cancel returned once the request had ended, its finalizers run.
      assert.isTrue(yield* Deferred.isDone(stopped))
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(fiber)))
      assert.isFalse(requests.has(7))
    }))

  it.scoped("server/sessionRequests/a request in place runs in the caller's fiber and is forgotten once it ends", () =>
    Effect.gen(function*() {
      const requests = yield* SessionRequests.make
      const caller = yield* Effect.fiberId
      const seen = yield* requests.inPlace(
        "p",
        Effect.map(Effect.fiberId, (inside) => ({ inside, known: requests.has("p") })),
        cancelled
      )
      assert.deepStrictEqual(seen.inside, caller)
      assert.isTrue(seen.known)
      assert.isFalse(requests.has("p"))
    }))

  it.scoped("server/sessionRequests/cancelling a request in place ends its fiber with what the caller gave", () =>
    Effect.gen(function*() {
      const requests = yield* SessionRequests.make
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(requests.inPlace("p", Effect.zipRight(Deferred.succeed(started, undefined), Effect.never), cancelled))
      yield* Deferred.await(started)
      yield* requests.cancel("p")
      const exit = yield* Fiber.await(fiber)
      assert.strictEqual(defectOf(exit), "cancelled")
      assert.isFalse(requests.has("p"))
    }))

  it.scoped("server/sessionRequests/a request in place that fails keeps its own failure, and a cancel after it ended touches nothing", () =>
    Effect.gen(function*() {
      const requests = yield* SessionRequests.make
      const exit = yield* Effect.exit(requests.inPlace("p", Effect.dieMessage("its own"), cancelled))
      assert.match(String(defectOf(exit)), /its own/)
      // Nothing is registered under the id now: the caller's fiber is left alone, and the id is free.
      assert.isFalse(requests.has("p"))
      yield* requests.cancel("p")
      assert.strictEqual(yield* requests.inPlace("p", Effect.succeed(1), cancelled), 1)
    }))

  it.effect("server/sessionRequests/the session's end interrupts what is in flight, and afterwards nothing runs", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const requests = yield* Scope.extend(SessionRequests.make, scope)
      const started = yield* Deferred.make<void>()
      const forked = yield* requests.fork("f", Effect.zipRight(Deferred.succeed(started, undefined), Effect.never))
      const inPlaceStarted = yield* Deferred.make<void>()
      const inPlace = yield* Effect.fork(requests.inPlace("p", Effect.zipRight(Deferred.succeed(inPlaceStarted, undefined), Effect.never), cancelled))
      yield* Deferred.await(started)
      yield* Deferred.await(inPlaceStarted)
      yield* Scope.close(scope, Exit.void)
      // Closing waited for both.
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(forked)))
      assert.strictEqual(defectOf(yield* Fiber.await(inPlace)), "cancelled")
      assert.strictEqual(requests.size(), 0)
      // Later requests are not run: a forked one is interrupted, one in place ends as cancelled.
      let ran = false
      const late = yield* requests.fork("late", Effect.sync(() => void (ran = true)))
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(late)))
      assert.strictEqual(defectOf(yield* Effect.exit(requests.inPlace("late", Effect.sync(() => void (ran = true)), cancelled))), "cancelled")
      assert.isFalse(ran)
      assert.isFalse(requests.has("late"))
    }))

  it.scoped("server/sessionRequests/awaitEmpty completes as the last request ends, forked or in place", () =>
    Effect.gen(function*() {
      const requests = yield* SessionRequests.make
      // Nothing in flight: at once.
      yield* requests.awaitEmpty
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      yield* requests.fork("a", Deferred.await(gate))
      const inPlace = yield* Effect.fork(requests.inPlace("b", Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(gate)), cancelled))
      yield* Deferred.await(started)
      const waiter = yield* Effect.fork(requests.awaitEmpty)
      yield* Effect.yieldNow()
      assert.isTrue((yield* Fiber.poll(waiter))._tag === "None")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(waiter)
      yield* Fiber.join(inPlace)
      assert.strictEqual(requests.size(), 0)
    }))

  it.scoped("server/sessionRequests/cancelAll interrupts every request and waits, and the registry stays open", () =>
    Effect.gen(function*() {
      const requests = yield* SessionRequests.make
      const stopped: Array<string> = []
      const started = yield* Deferred.make<void>()
      const one = yield* requests.fork(1, Effect.onInterrupt(Effect.never, () => Effect.sync(() => void stopped.push("one"))))
      const two = yield* requests.fork(
        "2",
        Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
          Effect.onInterrupt(() => Effect.sync(() => void stopped.push("two")))
        )
      )
      yield* Deferred.await(started)
      yield* requests.cancelAll
      assert.sameMembers(stopped, ["one", "two"])
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(one)))
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(two)))
      assert.strictEqual(requests.size(), 0)
      // Still open: a later request runs.
      assert.strictEqual(yield* Fiber.join(yield* requests.fork(3, Effect.succeed("later"))), "later")
    }))

  it.effect("server/sessionRequests/the session's end wakes whoever awaits it empty", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const requests = yield* Scope.extend(SessionRequests.make, scope)
      yield* requests.fork("a", Effect.never)
      const waiter = yield* Effect.fork(requests.awaitEmpty)
      yield* Effect.yieldNow()
      yield* Scope.close(scope, Exit.void)
      yield* Fiber.join(waiter)
      assert.strictEqual(requests.size(), 0)
    }))
})
