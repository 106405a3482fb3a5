/**
 * The fuzz suite end to end (issue 10): the same seeded frames and wire-rule model as the
 * in-process suite (packages/server/test/fuzz), sent to the built daemon's `/mcp` over real HTTP
 * and to `mcpx-fx serve` over its stdin, with a real upstream (the era-server's `alpha__echo`)
 * behind both — so Node's HTTP server, the edge policy and the gateway are in the path. Each
 * answer is checked, a valid call must be served every 50 frames and at the end, and the daemon
 * and serve must still be running.
 *
 * `npm test` sends 150 frames to each; `npm run fuzz` (MCPX_FUZZ_FRAMES=100000) a tenth of its count.
 */
import { assert, describe, it } from "@effect/vitest"
import { frames } from "@mcpx-fx/testing/fuzz/Frames"
import { type Expected, expected, mismatch, refusedWhole, type Rules } from "@mcpx-fx/testing/fuzz/Model"
import * as Effect from "effect/Effect"
import * as HttpDaemon from "./support/HttpDaemon.js"
import { initializeParams } from "./support/Revisions.js"
import { era, start } from "./support/StdioServe.js"

const Count = process.env.MCPX_FUZZ_FRAMES === undefined ? 150 : Math.ceil(Number(process.env.MCPX_FUZZ_FRAMES) / 10)
const Seed = Number(process.env.MCPX_FUZZ_SEED ?? 20261001)
const Target = { maxBatch: 100, maxDepth: 128, echoTool: "alpha__echo" }
const Large = Count > 1000
const config = { servers: { alpha: era("dual") } }

const echo = (n: number) => ({ jsonrpc: "2.0", id: `valid-${n}`, method: "tools/call", params: { name: "alpha__echo", arguments: { message: `m${n}` } } })

const assertEchoed = (reply: unknown, n: number) => {
  const text = JSON.stringify(reply)
  assert.include(text, `"id":"valid-${n}"`, text)
  assert.include(text, `m${n}`, text)
  assert.notInclude(text, `"error"`, text)
}

const failure = (transport: string, index: number, kind: string, text: string, why: string) =>
  `${transport} frame ${index} (${kind}, seed ${Seed}): ${why}\nsent: ${text.slice(0, 500)}`

describe("fuzz end to end", () => {
  it.scoped(`the daemon's /mcp: ${Count} frames over HTTP, each answered by the rules`, () =>
    Effect.gen(function*() {
      const running = yield* Effect.orDie(HttpDaemon.start(config))
      const url = running.daemon.info.mcp
      // The daemon's era-server is a legacy-capable upstream; the caller is 2025-03-26, without a session.
      const rules: Rules = { maxBatch: Target.maxBatch, maxDepth: Target.maxDepth, strayResponse: "refused" }
      const post = (text: string) =>
        Effect.promise(async () => {
          const r = await fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" },
            body: text
          })
          const body = await r.text()
          return { status: r.status, body: body.length > 0 ? (JSON.parse(body) as unknown) : undefined }
        })
      let index = 0
      for (const frame of frames(Seed + 2, Count, Target)) {
        index++
        const want: Expected = frame.expect ?? expected(frame.text, rules)
        const reply = yield* post(frame.text)
        const wrong = mismatch(want, reply.body)
        if (wrong !== undefined) assert.fail(failure("daemon", index, frame.kind, frame.text, wrong))
        const status = want._tag === "None" ? 202 : refusedWhole(want) ? 400 : 200
        if (reply.status !== status) assert.fail(failure("daemon", index, frame.kind, frame.text, `HTTP ${reply.status}, not ${status}`))
        if (index % 50 === 0) assertEchoed((yield* post(JSON.stringify(echo(index)))).body, index)
      }
      assertEchoed((yield* post(JSON.stringify(echo(0)))).body, 0)
      assert.isNull(running.daemon.child.exitCode, running.daemon.stderr())
      if (Large) console.log(`fuzz daemon /mcp: seed ${Seed + 2}, tried ${index}, crashed 0, lost 0`)
    }), { timeout: Large ? 3_600_000 : 120_000 })

  it.scoped(`mcpx-fx serve: ${Count} frames over stdio, each answered by the rules`, () =>
    Effect.gen(function*() {
      const serve = yield* start(config)
      const rules: Rules = { maxBatch: Target.maxBatch, maxDepth: Target.maxDepth, strayResponse: "ignored" }
      yield* serve.request(0, "initialize", initializeParams("2025-03-26"))
      yield* serve.send({ method: "notifications/initialized" })
      let consumed = (yield* serve.frames).length
      // Frames already seen, so a batch reply is waited for only if it is a new one.
      const earlier = new WeakSet<object>(yield* serve.frames)
      /** What came back for one line, besides the reply to the ping sent after it. */
      const exchange = (text: string, seq: number, awaitId: string | number | undefined, awaitBatch: boolean) =>
        Effect.gen(function*() {
          yield* serve.sendLine(text)
          yield* serve.request(`sync-${seq}`, "ping")
          if (awaitId !== undefined) yield* serve.reply(awaitId)
          if (awaitBatch) yield* serve.frame((f) => (Array.isArray(f) && !earlier.has(f) ? f : undefined), "a batch reply")
          const all = yield* serve.frames
          const fresh = all.slice(consumed)
          for (const f of fresh) earlier.add(f)
          const mine = fresh.filter((f) => Array.isArray(f) || (f as { id?: unknown }).id !== `sync-${seq}`)
          consumed = all.length
          return mine
        })
      let index = 0
      for (const frame of frames(Seed + 3, Count, Target)) {
        index++
        const want: Expected = frame.expect ?? expected(frame.text, rules)
        const replies = yield* exchange(frame.text, index, want._tag === "Answer" ? want.id : undefined, want._tag === "Batch")
        if (replies.length > 1) assert.fail(failure("serve", index, frame.kind, frame.text, `more than one reply: ${JSON.stringify(replies)}`))
        const wrong = mismatch(want, replies[0])
        if (wrong !== undefined) assert.fail(failure("serve", index, frame.kind, frame.text, wrong))
        if (index % 50 === 0) {
          const served = yield* exchange(JSON.stringify(echo(index)), -index, `valid-${index}`, false)
          assertEchoed(served[0], index)
        }
      }
      assertEchoed((yield* exchange(JSON.stringify(echo(0)), 0, "valid-0", false))[0], 0)
      yield* serve.end
      const exited = yield* serve.exited
      assert.strictEqual(exited.code, 0, exited.stderr)
      assert.deepStrictEqual(exited.violations, [])
      if (Large) console.log(`fuzz serve stdio: seed ${Seed + 3}, tried ${index}, crashed 0, lost 0`)
    }), { timeout: Large ? 3_600_000 : 120_000 })
})
