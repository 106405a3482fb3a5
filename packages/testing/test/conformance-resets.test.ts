/**
 * How `npm run conformance:client` tells a scenario the suite's own mock server reset apart from a
 * real failure (scripts/conformance-resets.mjs): only a last error that is the mock server's
 * origin resetting the connection counts, so only such a scenario is rerun, and a leg with any
 * other unexpected failure stays red. The stderr texts are the driver's, as a loaded run left them.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { mockServerReset, rerunnable, resetsIn, scenarioOfDir } from "../../../scripts/conformance-resets.mjs"

const given = (scenario: string, url: string) => `[10:34:57.290] INFO (#16): ${scenario} at 2025-11-25: ${url} (prefer-discover)\n`
const failed = (scenario: string, reason: string) => `[10:35:13.358] ERROR (#0): ${scenario} failed: ${reason}\n`

const resetOfMock = given("tools_call", "http://localhost:37713/mcp") +
  failed("tools_call", "cannot reach http://localhost:37713/mcp: fetch failed: other side closed")

describe("conformance client resets", () => {
  it("conformance/resets: the mock server's own reset, however it is worded, is one", () => {
    assert.deepStrictEqual(mockServerReset(resetOfMock), { url: "http://localhost:37713/mcp", cause: "fetch failed: other side closed" })
    const sse = given("sse-retry", "http://localhost:36171") +
      failed("sse-retry", "connection to http://localhost:36171/ broke: terminated: read ECONNRESET")
    assert.strictEqual(mockServerReset(sse)?.cause, "terminated: read ECONNRESET")
    const hangUp = given("x", "http://127.0.0.1:4000/mcp") + failed("x", "cannot reach http://127.0.0.1:4000/mcp: socket hang up")
    assert.isDefined(mockServerReset(hangUp))
  })

  it("conformance/resets: anything else is a real failure", () => {
    const cases = {
      "a check that failed": given("tools_call", "http://localhost:1/mcp") + failed("tools_call", "upstream answered HTTP 401: {}"),
      "a refused connection": given("tools_call", "http://localhost:1/mcp") +
        failed("tools_call", "cannot reach http://localhost:1/mcp: fetch failed: connect ECONNREFUSED 127.0.0.1:1"),
      "a reset of another server": given("tools_call", "http://localhost:1/mcp") +
        failed("tools_call", "cannot reach http://localhost:2/mcp: fetch failed: other side closed"),
      "a reset that was not the last error": given("tools_call", "http://localhost:1/mcp") +
        failed("tools_call", "cannot reach http://localhost:1/mcp: fetch failed: other side closed") +
        failed("tools_call", "gave up after 55s"),
      "no mock server named": failed("tools_call", "cannot reach http://localhost:1/mcp: fetch failed: other side closed"),
      "a scenario that passed": given("tools_call", "http://localhost:1/mcp") + "[10:35:13.358] INFO (#0): tools_call: done\n"
    }
    for (const [what, stderr] of Object.entries(cases)) assert.isUndefined(mockServerReset(stderr), what)
  })

  it.scoped("conformance/resets: a leg is rerun only when every unexpected failure is such a reset", () =>
    Effect.gen(function*() {
      const leg = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "mcpx-conf-resets-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const write = (dir: string, stderr: string) => {
        mkdirSync(join(leg, dir), { recursive: true })
        writeFileSync(join(leg, dir, "stderr.txt"), stderr)
      }
      write("tools_call-2026-12-01T10-34-39-517Z", resetOfMock)
      write(
        "auth/metadata-default-2026-12-01T10-34-39-600Z",
        given("auth/metadata-default", "http://localhost:9/mcp") +
          failed("auth/metadata-default", "cannot reach http://localhost:9/mcp: fetch failed: ECONNRESET")
      )
      write("sep-2322-client-request-state-2026-12-01T10-35-17-858Z", given("sep-2322-client-request-state", "http://localhost:5/mcp"))
      assert.strictEqual(scenarioOfDir("auth/metadata-default-2026-12-01T10-34-39-600Z"), "auth/metadata-default")

      const all = ["tools_call", "auth/metadata-default", "sep-2322-client-request-state"]
      const resets = resetsIn(leg, all)
      assert.sameMembers([...resets.keys()], ["tools_call", "auth/metadata-default"])
      assert.sameMembers(rerunnable({ unexpected: ["tools_call", "auth/metadata-default"], stale: false, resets }) ?? [], [
        "tools_call",
        "auth/metadata-default"
      ])
      // One real failure among them, or a stale baseline, keeps the leg red without reruns.
      assert.isUndefined(rerunnable({ unexpected: all, stale: false, resets }))
      assert.isUndefined(rerunnable({ unexpected: ["tools_call"], stale: true, resets }))
      assert.isUndefined(rerunnable({ unexpected: [], stale: false, resets }))
    }))
})
