/**
 * The live page in a real browser (headless Chromium, support/Chromium.ts) against the bundled
 * daemon on the era fixture, opened at the address `mcpx-fx ui` prints: the servers show; a call
 * made meanwhile appears as it ends, and the server's start comes down the event stream; a question
 * `ask_name` asks appears, is answered in the page's form, and the tool returns that answer. The
 * page runs under its own Content-Security-Policy without a violation.
 *
 * Every wait is on something on the page (Playwright's selectors); none is a sleep. A screenshot
 * of the page with a question open is left at `<tmpdir>/mcpx-fx-ui/ui.png`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as Chromium from "./support/Chromium.js"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { sandbox } from "./support/Sandbox.js"
import { era } from "./support/StdioServe.js"

const Wait = { timeout: 20_000 }

const post = (url: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  })

const PngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

describe("the live page in a browser", () => {
  it.scoped("ui/browser: servers, a call as it ends, an event, and a question answered in the page's form", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const state = sb.path("state")
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { up: era("dual") } })
      const daemon = yield* DaemonProcess.start(sb, { config, stateDir: state })
      const printed = yield* sb.run(["ui"], { env: { MCPX_STATE_DIR: state } })
      assert.strictEqual(printed.code, 0, printed.stderr)
      const address = printed.stdout.trim()
      assert.match(address, /\/ui#owner=[A-Za-z0-9_-]{32,}$/)

      const browser = yield* Chromium.launch
      const page = yield* Effect.promise(() => browser.newPage())
      const problems: Array<string> = []
      page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())))
      page.on("pageerror", (e) => void problems.push(e.message))
      yield* Effect.promise(() => page.goto(address))

      // The servers, and the page knows itself the owner's; the secret is gone from the address.
      yield* Effect.promise(() => page.locator("#servers tr[data-server=up]").waitFor(Wait))
      assert.strictEqual(yield* Effect.promise(() => page.locator("#access").textContent()), "owner")
      assert.notInclude(page.url(), "owner=")
      yield* Effect.promise(() => page.locator("#stream", { hasText: "live" }).waitFor(Wait))

      // A call made meanwhile shows up as it ends; starting the server comes down /v1/events.
      const called = yield* post(`${daemon.info.url}/v1/call`, { tool: "up.echo", arguments: { message: "from the test" } })
      assert.strictEqual(called.status, 200)
      yield* Effect.promise(() => page.locator("#calls tbody tr", { hasText: "up__echo" }).waitFor(Wait))
      const row = yield* Effect.promise(() => page.locator("#calls tbody tr", { hasText: "up__echo" }).first().textContent())
      assert.include(row, "v1")
      assert.include(row, "ok")
      yield* Effect.promise(() => page.locator("#events li", { hasText: "server.start" }).first().waitFor(Wait))
      yield* Effect.promise(() => page.locator("#servers tr[data-server=up] td", { hasText: /^(legacy|modern)/ }).first().waitFor(Wait))

      // A question: it appears in the page with a form built from its requestedSchema.
      const asked = yield* post(`${daemon.info.url}/v1/ask`, { tool: "up.ask_name", waitMs: 10_000 })
      assert.strictEqual(asked.body.status, "input_required", JSON.stringify(asked.body))
      const card = page.locator(".question", { hasText: "What is your name?" })
      yield* Effect.promise(() => card.locator("input[name=name]").waitFor(Wait))

      const shot = path.join(tmpdir(), "mcpx-fx-ui", "ui.png")
      mkdirSync(path.dirname(shot), { recursive: true })
      yield* Effect.promise(() => page.setViewportSize({ width: 1200, height: 900 }))
      yield* Effect.promise(() => page.screenshot({ path: shot, fullPage: true }))
      assert.deepStrictEqual(readFileSync(shot).subarray(0, 8), PngSignature)

      yield* Effect.promise(() => card.locator("input[name=name]").fill("Grace"))
      yield* Effect.promise(() => card.locator("button.accept").click())
      // The card says "answered" once its POST is through, but the question, no longer open, may
      // leave the page first (a refresh removes it): either shows the page took the answer, and
      // the call's result below shows it reached the upstream.
      yield* Effect.promise(() => Promise.any([card.locator(".status", { hasText: "answered" }).waitFor(Wait), card.waitFor({ ...Wait, state: "detached" })]))
      const done = yield* Effect.promise(async () => {
        const response = await fetch(`${daemon.info.url}/v1/ask/${String(asked.body.id)}?waitMs=10000`)
        return (await response.json()) as { readonly status: string; readonly result?: { readonly content: unknown } }
      })
      assert.strictEqual(done.status, "complete")
      assert.deepStrictEqual(done.result?.content, [{ type: "text", text: "hello, Grace" }])
      // Once answered the question leaves the page.
      yield* Effect.promise(() => page.locator("#questions .empty").waitFor(Wait))
      assert.deepStrictEqual(problems, [])
    }), 90_000)
})
