/**
 * The thin node:http adapter `/mcp` runs on: a client that goes away interrupts its request's
 * fiber, unless the app detached the request from its client (ClientDetach, what a legacy
 * session's request run in place does); a detached request that the app itself interrupts is
 * answered with the response its cause carries. Real sockets on 127.0.0.1, an ephemeral port.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { assert, describe, it } from "@effect/vitest"
import * as ClientDetach from "@mcpx-fx/server/ClientDetach"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as NodeHttpApp from "../src/NodeHttpApp.js"

interface Seen {
  readonly started: Deferred.Deferred<Fiber.RuntimeFiber<unknown, unknown>>
  readonly gate: Deferred.Deferred<void>
  readonly finished: Deferred.Deferred<void>
  readonly interrupted: Deferred.Deferred<void>
  /** The server side of the request saw its connection close. */
  readonly closed: Deferred.Deferred<void>
}

const makeSeen = Effect.all({
  started: Deferred.make<Fiber.RuntimeFiber<unknown, unknown>>(),
  gate: Deferred.make<void>(),
  finished: Deferred.make<void>(),
  interrupted: Deferred.make<void>(),
  closed: Deferred.make<void>()
})

/**
 * `?detach` detaches the request first. It then waits for the gate; interrupted there, a detached
 * request ends with a carried 409 "carried".
 */
const appOf = (seen: Seen): HttpApp.Default =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const detach = request.url.includes("detach")
    if (detach && ClientDetach.isDetachable(request)) request[ClientDetach.Detach]()
    const wait = Effect.withFiberRuntime<void>((fiber) => Effect.zipRight(Deferred.succeed(seen.started, fiber), Deferred.await(seen.gate)))
    return Effect.uninterruptibleMask((restore) =>
      Effect.matchCauseEffect(restore(wait), {
        onFailure: () =>
          Effect.zipRight(
            Deferred.succeed(seen.interrupted, undefined),
            detach ? Effect.die(HttpServerResponse.text("carried", { status: 409 })) : Effect.interrupt
          ),
        onSuccess: () => Effect.as(Deferred.succeed(seen.finished, undefined), HttpServerResponse.text("done"))
      })
    )
  })

/** The adapter on an ephemeral loopback port, closed with the scope. */
const serve = (seen: Seen) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const handler = NodeHttpApp.makeHandler(appOf(seen), runtime)
    const server = Http.createServer((req, res) => {
      res.once("close", () => Deferred.unsafeDone(seen.closed, Effect.void))
      handler(req, res)
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    return (server.address() as Net.AddressInfo).port
  })

/** A GET of `path`, with a way to drop it and its outcome (status and body, or the error). */
const get = (port: number, path: string) =>
  Effect.sync(() => {
    const outcome = Deferred.unsafeMake<{ readonly status: number; readonly body: string } | { readonly error: string }>(FiberId.none)
    const req = Http.get({ host: "127.0.0.1", port, path }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (body += c))
      res.on("end", () => Deferred.unsafeDone(outcome, Effect.succeed({ status: res.statusCode ?? 0, body })))
    })
    req.on("error", (e) => Deferred.unsafeDone(outcome, Effect.succeed({ error: e.message })))
    return { drop: () => req.destroy(), outcome: Deferred.await(outcome) }
  })

describe("NodeHttpApp", () => {
  it.scoped("cli/nodeHttpApp/a client that goes away interrupts its request", () =>
    Effect.gen(function*() {
      const seen = yield* makeSeen
      const port = yield* serve(seen)
      const request = yield* get(port, "/plain")
      yield* Deferred.await(seen.started)
      request.drop()
      yield* Deferred.await(seen.interrupted)
      assert.isFalse(yield* Deferred.isDone(seen.finished))
    }))

  it.scoped("cli/nodeHttpApp/a detached request runs to its end after its client went away", () =>
    Effect.gen(function*() {
      const seen = yield* makeSeen
      const port = yield* serve(seen)
      const request = yield* get(port, "/detach")
      yield* Deferred.await(seen.started)
      request.drop()
      // The adapter's own close listener runs in the same emit as the one that completes this.
      yield* Deferred.await(seen.closed)
      yield* Deferred.succeed(seen.gate, undefined)
      yield* Deferred.await(seen.finished)
      assert.isFalse(yield* Deferred.isDone(seen.interrupted))
    }))

  it.scoped("cli/nodeHttpApp/a detached request the app interrupts is answered with the response its cause carries", () =>
    Effect.gen(function*() {
      const seen = yield* makeSeen
      const port = yield* serve(seen)
      const request = yield* get(port, "/detach")
      const fiber = yield* Deferred.await(seen.started)
      fiber.unsafeInterruptAsFork(fiber.id())
      assert.deepStrictEqual(yield* request.outcome, { status: 409, body: "carried" })
      assert.isTrue(yield* Deferred.isDone(seen.interrupted))
    }))
})
