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
import * as BodyAtHand from "@mcpx-fx/server/BodyAtHand"
import * as ClientDetach from "@mcpx-fx/server/ClientDetach"
import { listenLocal } from "@mcpx-fx/testing/Listening"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Http from "node:http"
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
    return yield* listenLocal(server)
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

/** Answers with the body it read, through a modified copy of the request when `?copy`. */
const echoApp: HttpApp.Default = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const reader = request.url.includes("copy") ? request.modify({ url: "/elsewhere" }) : request
  return Effect.map(Effect.orDie(reader.text), (text) => HttpServerResponse.text(`${text.length}:${text.slice(0, 8)}`))
})

/** Answers whether the request's body was at hand when the app ran (BodyAtHand), and as what text. */
const atHandApp: HttpApp.Default = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const reader = request.url.includes("copy") ? request.modify({ url: "/elsewhere" }) : request
  const atHand = BodyAtHand.of(reader)
  return HttpServerResponse.text(atHand === undefined ? "not at hand" : `at hand: ${Buffer.from(atHand).toString("utf8")}`)
})

/** The echo app (or `served`) on an ephemeral port, with its requests in flight counted by the hooks. */
const serveEcho = (served: HttpApp.Default = echoApp) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const counts = { started: 0, ended: 0, ranApp: 0 }
    const ended = yield* Deferred.make<void>()
    const app = Effect.zipRight(Effect.sync(() => void counts.ranApp++), served)
    const handler = NodeHttpApp.makeHandler(app, runtime, {
      onStart: () => void counts.started++,
      onEnd: () => {
        counts.ended++
        Deferred.unsafeDone(ended, Effect.void)
      }
    })
    const server = Http.createServer(handler)
    return { port: yield* listenLocal(server), counts, ended: Deferred.await(ended) }
  })

/** A POST of `body` (declared by length unless `chunked`); its status and body. */
const post = (port: number, path: string, body: string, chunked = false) =>
  Effect.async<{ readonly status: number; readonly body: string }, Error>((resume) => {
    const headers = chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(Buffer.byteLength(body)) }
    const req = Http.request({ host: "127.0.0.1", port, path, method: "POST", headers }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (text += c))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: text })))
    })
    req.on("error", (e) => resume(Effect.fail(e)))
    req.end(body)
  })

describe("NodeHttpApp: bodies", () => {
  it.scoped("cli/nodeHttpApp/a small declared body reaches the app, and a copy of the request reads the same", () =>
    Effect.gen(function*() {
      const { counts, port } = yield* serveEcho()
      assert.deepStrictEqual(yield* post(port, "/mcp", "hello body"), { status: 200, body: "10:hello bo" })
      assert.deepStrictEqual(yield* post(port, "/mcp?copy", "copied body"), { status: 200, body: "11:copied b" })
      const large = "x".repeat(200 * 1024)
      assert.deepStrictEqual(yield* post(port, "/mcp", large), { status: 200, body: `${large.length}:xxxxxxxx` })
      assert.deepStrictEqual(yield* post(port, "/mcp", "no length", true), { status: 200, body: "9:no lengt" })
      assert.deepStrictEqual(counts, { started: 4, ended: 4, ranApp: 4 })
    }))

  it.scoped("cli/nodeHttpApp/a small declared body is at hand when the app runs, a large or unannounced one is read by the app", () =>
    Effect.gen(function*() {
      const { port } = yield* serveEcho(atHandApp)
      assert.deepStrictEqual(yield* post(port, "/mcp", "hello body"), { status: 200, body: "at hand: hello body" })
      assert.deepStrictEqual(yield* post(port, "/mcp?copy", "copied body"), { status: 200, body: "at hand: copied body" })
      assert.deepStrictEqual(yield* post(port, "/mcp", "x".repeat(200 * 1024)), { status: 200, body: "not at hand" })
      assert.deepStrictEqual(yield* post(port, "/mcp", "no length", true), { status: 200, body: "not at hand" })
    }))

  it.scoped("cli/nodeHttpApp/a client that leaves before its small body ends is not served, and its request ends", () =>
    Effect.gen(function*() {
      const { counts, ended, port } = yield* serveEcho()
      const req = Http.request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { "content-length": "100" } })
      req.on("error", () => {})
      req.write("only part", () => req.destroy())
      // The server sees the connection close after the client does; then the request has ended.
      yield* ended
      assert.deepStrictEqual(counts, { started: 1, ended: 1, ranApp: 0 })
    }))
})

/** A ref the runtime sets, and one it leaves at its initial value. */
const setRef = FiberRef.unsafeMake("initial")
const untouchedRef = FiberRef.unsafeMake("untouched")

describe("NodeHttpApp: the request's fiber", () => {
  it.scoped("cli/nodeHttpApp/a request's fiber holds the runtime's fiber refs and its own request", () =>
    Effect.gen(function*() {
      const runtime = yield* Effect.locally(Effect.runtime<never>(), setRef, "set by the runtime")
      const app: HttpApp.Default = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const refs = `${yield* FiberRef.get(setRef)}; ${yield* FiberRef.get(untouchedRef)}`
        return HttpServerResponse.text(`${refs}; ${request.url}`)
      })
      const port = yield* listenLocal(Http.createServer(NodeHttpApp.makeHandler(app, runtime)))
      const first = yield* get(port, "/mcp/first")
      const second = yield* get(port, "/mcp/second")
      assert.deepStrictEqual(yield* first.outcome, { status: 200, body: "set by the runtime; untouched; /mcp/first" })
      assert.deepStrictEqual(yield* second.outcome, { status: 200, body: "set by the runtime; untouched; /mcp/second" })
    }))
})
