/**
 * The fuzz suite (issue 10): seeded frames of every kind (@mcpx-fx/testing/fuzz/Frames) sent one at a time to
 * the HTTP host's `/mcp` and to a stdio host, each answer checked against the wire rules
 * (@mcpx-fx/testing/fuzz/Model) — the right code for every request, nothing for a notification — with a valid
 * tools/call served every 100 frames and at the end, and no error logged (a defect in any fiber
 * is logged as one).
 *
 * `npm test` runs a few hundred frames per transport; `npm run fuzz` sets MCPX_FUZZ_FRAMES=100000.
 * MCPX_FUZZ_SEED picks another seed; a failure names the seed and the frame's index and text.
 */
import { assert, describe, it } from "@effect/vitest"
import { DefaultMaxBatch } from "../../src/Limits.js"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { Server } from "../../src/Server.js"
import { RequestState } from "../../src/RequestState.js"
import { StdioHost } from "../../src/StdioHost.js"
import { harness } from "../HttpHostHarness.js"
import { initialize, makeBackend } from "../support.js"
import { type Frame, frames } from "@mcpx-fx/testing/fuzz/Frames"
import { type Expected, expected, mismatch, refusedWhole, type Rules } from "@mcpx-fx/testing/fuzz/Model"
import * as TestTasks from "@mcpx-fx/testing/server/TestTasks"

const Count = Number(process.env.MCPX_FUZZ_FRAMES ?? 300)
const Seed = Number(process.env.MCPX_FUZZ_SEED ?? 20261001)
const Limits = { maxBatch: DefaultMaxBatch, maxDepth: JsonRpc.MaxDepth, echoTool: "echo" }
const Large = Count > 1000

/** What one run saw. */
interface Tally {
  tried: number
  errorsLogged: Array<string>
  readonly kinds: Record<string, number>
}

/** Records every log at Error or worse: a defect anywhere in the host is logged so. */
const recording = (tally: Tally) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message, cause }) => {
      if (LogLevel.greaterThanEqual(logLevel, LogLevel.Error)) tally.errorsLogged.push(`${String(message)} ${String(cause)}`)
    })
  )

const fail = (transport: string, index: number, frame: Frame, why: string): never =>
  assert.fail(`${transport} frame ${index} (${frame.kind}, seed ${Seed}): ${why}\nsent: ${frame.text.slice(0, 500)}`)

const echo = (n: number) => JsonRpc.request(`valid-${n}`, "tools/call", { name: "echo", arguments: { n } })

const assertEchoed = (reply: unknown, n: number) => {
  const r = reply as { readonly id?: unknown; readonly result?: { readonly content?: ReadonlyArray<{ readonly text?: unknown }> } }
  assert.strictEqual(r.id, `valid-${n}`, JSON.stringify(reply))
  assert.strictEqual(r.result?.content?.[0]?.text, `echo {"n":${n}}`, JSON.stringify(reply))
}

/**
 * A turn of the event loop. The in-process hosts answer on promises and fibers alone, and a long
 * run that never gives the loop a turn starves the test runner's own messages.
 */
const breathe = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

const report = (transport: string, tally: Tally, started: number) => {
  if (Large) {
    console.log(`fuzz ${transport}: seed ${Seed}, tried ${tally.tried}, crashed 0, lost 0, ${Date.now() - started} ms, kinds ${JSON.stringify(tally.kinds)}`)
  }
}

describe("fuzz", () => {
  it.scoped(`/mcp (HTTP, 2025-03-26): ${Count} frames, each answered by the rules, a valid call served after`, () => {
    const tally: Tally = { tried: 0, errorsLogged: [], kinds: {} }
    return Effect.gen(function*() {
      const started = Date.now()
      const h = yield* harness()
      const rules: Rules = { ...Limits, strayResponse: "refused" }
      const headers = { "mcp-protocol-version": "2025-03-26" }
      const post = (text: string) =>
        Effect.flatMap(h.post(text, headers), (r) =>
          Effect.promise(async () => {
            const body = await r.text()
            return { status: r.status, body: body.length > 0 ? (JSON.parse(body) as unknown) : undefined }
          }))
      let index = 0
      for (const frame of frames(Seed, Count, Limits)) {
        index++
        tally.tried++
        tally.kinds[frame.kind] = (tally.kinds[frame.kind] ?? 0) + 1
        const want: Expected = frame.expect ?? expected(frame.text, rules)
        const reply = yield* post(frame.text)
        const wrong = mismatch(want, reply.body)
        if (wrong !== undefined) fail("http", index, frame, wrong)
        const status = want._tag === "None" ? 202 : refusedWhole(want) ? 400 : 200
        if (reply.status !== status) fail("http", index, frame, `expected HTTP ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`)
        if (index % 100 === 0) {
          assertEchoed((yield* post(JSON.stringify(echo(index)))).body, index)
          yield* breathe
        }
      }
      assertEchoed((yield* post(JSON.stringify(echo(0)))).body, 0)
      assert.deepStrictEqual(tally.errorsLogged, [])
      report("http", tally, started)
    }).pipe(Effect.provide(recording(tally)))
  }, { timeout: Large ? 3_600_000 : 60_000 })

  it.scoped(`stdio (2025-03-26): ${Count} frames, each answered by the rules, a valid call served after`, () => {
    const tally: Tally = { tried: 0, errorsLogged: [], kinds: {} }
    const backend = makeBackend()
    const layer = StdioHost.layer.pipe(
      Layer.provide(Server.layer),
      Layer.provide(backend.layer),
      Layer.provide(TestTasks.layer),
      Layer.provide(RequestState.layer)
    )
    return Effect.gen(function*() {
      const started = Date.now()
      const host = yield* StdioHost
      const input = yield* Queue.unbounded<string>()
      const output = yield* Queue.unbounded<string>()
      yield* Effect.forkScoped(host.serve(Stream.fromQueue(input), (line) => Queue.offer(output, line), { drain: "1 second" }))
      const rules: Rules = { ...Limits, strayResponse: "ignored" }
      const isSync = (m: unknown, seq: number) => typeof m === "object" && m !== null && (m as { id?: unknown }).id === `sync-${seq}`

      /** Sends a line and a ping after it; returns what came back besides the ping's reply. */
      const exchange = (text: string, seq: number, awaitReply: boolean) =>
        Effect.gen(function*() {
          yield* Queue.offer(input, text)
          yield* Queue.offer(input, JSON.stringify(JsonRpc.request(`sync-${seq}`, "ping")))
          const replies: Array<unknown> = []
          let synced = false
          // Frame-level errors are written before the ping is read; a request's or batch's reply
          // may come after the ping's, so it is waited for when one is due.
          while (!synced || (awaitReply && replies.length === 0)) {
            const m: unknown = JSON.parse(yield* Queue.take(output))
            if (isSync(m, seq)) synced = true
            else replies.push(m)
          }
          return replies
        })

      yield* Queue.offer(input, JSON.stringify(initialize("2025-03-26")))
      JSON.parse(yield* Queue.take(output))
      yield* Queue.offer(input, JSON.stringify(JsonRpc.notification("notifications/initialized")))
      let index = 0
      for (const frame of frames(Seed + 1, Count, Limits)) {
        index++
        tally.tried++
        tally.kinds[frame.kind] = (tally.kinds[frame.kind] ?? 0) + 1
        const want: Expected = frame.expect ?? expected(frame.text, rules)
        const replies = yield* exchange(frame.text, index, want._tag === "Answer" || want._tag === "Batch")
        if (replies.length > 1) fail("stdio", index, frame, `more than one reply: ${JSON.stringify(replies)}`)
        const wrong = mismatch(want, replies[0])
        if (wrong !== undefined) fail("stdio", index, frame, wrong)
        if (index % 100 === 0) {
          const served = yield* exchange(JSON.stringify(echo(index)), -index, true)
          assertEchoed(served[0], index)
          yield* breathe
        }
      }
      assertEchoed((yield* exchange(JSON.stringify(echo(0)), 0, true))[0], 0)
      assert.strictEqual(yield* Queue.size(output), 0, "a reply came that no frame asked for")
      assert.deepStrictEqual(tally.errorsLogged, [])
      report("stdio", tally, started)
    }).pipe(
      // The recording logger is provided outside the layer so it also sees the layer being built.
      // @effect-diagnostics-next-line multipleEffectProvide:off
      Effect.provide(layer),
      Effect.provide(recording(tally))
    )
  }, { timeout: Large ? 3_600_000 : 60_000 })
})
