/**
 * A 2026-07-28 host on `mcpx-fx serve` (stdio) calling a legacy upstream that asks: each question
 * reaches it as `input_required`, its answers go back upstream, and every bound and refusal holds
 * (Flows.ts). Each test has a serve, and so an upstream, of its own.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { overStdio } from "../support/ModernHost.js"
import { responseId, type Serve, start } from "../support/StdioServe.js"
import * as Flows from "./Flows.js"

const legacy = Fixtures.fixtureScript("sdk-v1-legacy")

/** A serve with one sdk-v1-legacy upstream, `leg`, logging into the sandbox. */
const serving = (settings: Readonly<Record<string, unknown>> = {}) =>
  Effect.gen(function*() {
    const serve = yield* start((sb) => ({
      servers: { leg: Flows.legacyServer(legacy, sb.path("leg.log")) },
      settings: { "transport.stdioDrain": "5s", ...settings }
    }))
    return { serve, host: overStdio(serve, "stdio"), upstream: { ns: "leg", log: serve.sandbox.path("leg.log") } }
  })

/** Closes the host's stdin: serve must exit 0 with nothing but JSON-RPC on stdout. */
const finish = (serve: Serve) =>
  Effect.gen(function*() {
    yield* serve.end
    const run = yield* serve.exited
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(run.violations, [], run.stderr)
    return run
  })

describe.concurrent("questions from a legacy upstream over mcpx-fx serve", () => {
  it.scoped.each(Flows.Every)("2026-07-28/questions/%s [stdio]: %s", ([, , flow]) =>
    Effect.gen(function*() {
      const { host, serve, upstream } = yield* serving()
      yield* flow(host, upstream)
      yield* finish(serve)
    }))

  it.scoped("2026-07-28/questions/ttl [stdio]: at questions.ttl the question is answered cancel, the upstream call cancelled, the state refused as expired", () =>
    Effect.gen(function*() {
      const { host, serve, upstream } = yield* serving({ "questions.ttl": "2s" })
      yield* Flows.expiry(host, upstream)
      yield* finish(serve)
    }))

  // The gathering window is made long so the host's request is still open while its question
  // waits at mcpx-fx: walking away then answers the question for it and cancels the upstream call.
  it.scoped("2026-07-28/questions/abandon-mid-question [stdio]: notifications/cancelled while a question waits ends the upstream call", () =>
    Effect.gen(function*() {
      const { host, serve, upstream } = yield* serving({ "questions.gather": "10m" })
      const call = yield* host.begin("walked-away", "tools/call", Flows.tool(upstream, "ask_name"), Flows.Elicitation)
      yield* Flows.upstreamSaw(upstream, "asked elicitation/create")
      yield* call.abandon
      yield* Flows.upstreamSaw(upstream, "answered elicitation/create")
      yield* Flows.upstreamSaw(upstream, "legacy notifications/cancelled")
      const run = yield* finish(serve)
      assert.isFalse(run.frames.some((f) => responseId(f) === "walked-away"), run.lines.join("\n"))
    }))
})
