/**
 * A real Prometheus scraping the daemon's `/metrics` every second: a host's call made through
 * `/mcp` becomes a value Prometheus answers in its query API.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { beforeAll } from "vitest"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { endpoint, modernRequest } from "./support/HttpMcp.js"
import * as PrometheusServer from "./support/PrometheusServer.js"
import { sandbox } from "./support/Sandbox.js"
import { era } from "./support/StdioServe.js"

// The first run on a machine installs the package; that is not the test's time.
beforeAll(() => Effect.runPromise(PrometheusServer.ensureInstalled), 300_000)

describe("Prometheus", () => {
  it.scopedLive("prometheus/scrapes /metrics: a call's counter reaches the query API", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { era: era("dual") } })
      const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config }))
      const prometheus = yield* Effect.orDie(PrometheusServer.start(new URL(daemon.info.url).host))
      const reply = yield* modernRequest(endpoint(daemon.info.mcp), 1, "tools/call", { name: "era__echo", arguments: { message: "hi" } })
      assert.strictEqual(reply.status, 200)
      const query = `mcpx_server_calls_total{mcp_method_name="tools/call"}`
      // Scraped every second: a bounded poll of the query API until a scrape after the call is in.
      const value = yield* prometheus.query(query).pipe(
        Effect.filterOrFail((v): v is string => v === "1"),
        Effect.retry(Schedule.spaced(Duration.millis(250)).pipe(Schedule.upTo(Duration.seconds(30)))),
        Effect.orElse(() => Effect.succeed(`never answered; Prometheus said: ${prometheus.log()}`))
      )
      assert.strictEqual(value, "1")
      const up = yield* prometheus.query(`up{job="mcpx-fx"}`)
      assert.strictEqual(up, "1")
    }), 60_000)
})
