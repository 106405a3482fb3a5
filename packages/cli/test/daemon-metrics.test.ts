/**
 * `GET /metrics` on a real daemon (the bundle): a host's call shows in the server-side call
 * counter and duration histogram under its method, the upstream request it made in the
 * client-side ones, and the upstream's start in `mcpx_upstream_starts_total`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { endpoint, modernRequest } from "./support/HttpMcp.js"
import { sandbox } from "./support/Sandbox.js"
import { era } from "./support/StdioServe.js"

const scrape = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/metrics`)
    return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() }
  })

describe("daemon /metrics", () => {
  it.scoped("daemon/metrics/a call and the upstream start it caused show in the exposition", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { era: era("dual") } })
      const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config }))
      const before = yield* scrape(daemon.info.url)
      assert.strictEqual(before.status, 200)
      assert.strictEqual(before.type, "text/plain; version=0.0.4; charset=utf-8")
      assert.notInclude(before.text, "mcpx_server_calls_total{")

      const reply = yield* modernRequest(endpoint(daemon.info.mcp), 1, "tools/call", { name: "era__echo", arguments: { message: "hi" } })
      assert.strictEqual(reply.status, 200)

      const { text } = yield* scrape(daemon.info.url)
      assert.include(text, `mcpx_server_calls_total{mcp_method_name="tools/call"} 1`)
      assert.include(text, `mcp_server_operation_duration_count{mcp_method_name="tools/call"} 1`)
      assert.match(text, /mcp_server_operation_duration_bucket\{mcp_method_name="tools\/call",le="\+Inf"\} 1/)
      assert.include(text, `# UNIT mcp_server_operation_duration s`)
      assert.include(text, `mcpx_client_calls_total{mcp_method_name="tools/call"} 1`)
      assert.include(text, `mcpx_upstream_starts_total{server="era"} 1`)
      // The gauges are read at the scrape: nothing is pending, no legacy session is open.
      assert.include(text, "mcpx_questions_pending 0")
      assert.include(text, "mcpx_sessions 0")
      assert.include(text, "mcpx_tasks_active 0")
      // A task still running counts, read from the task store.
      const task = yield* Effect.promise(() =>
        fetch(`${daemon.info.url}/v1/call`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tool: "era.slow", arguments: { ms: 600_000 }, task: {} })
        }).then((r) => r.status)
      )
      assert.strictEqual(task, 202)
      assert.include((yield* scrape(daemon.info.url)).text, "mcpx_tasks_active 1")
    }))

  it.scoped("daemon/metrics/needs the daemon token when one is set", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { era: era("dual") } })
      const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config, args: ["--daemon-token", "metrics-token-0123456789"] }))
      const status = (headers: Record<string, string>) =>
        Effect.promise(() => fetch(`${daemon.info.url}/metrics`, { headers }).then(async (r) => (await r.text(), r.status)))
      assert.strictEqual(yield* status({}), 401)
      assert.strictEqual(yield* status({ authorization: "Bearer metrics-token-0123456789" }), 200)
    }))

  it.scoped("daemon/metrics/obeys the same Host policy as every route", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* sb.writeJson("mcpx.json", { mcpServers: { era: era("dual") } })
      const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config }))
      const { port } = new URL(daemon.info.url)
      const status = yield* Effect.promise(() =>
        import("node:http").then((http) =>
          new Promise<number>((resolve, reject) => {
            const request = http.request({ host: "127.0.0.1", port, path: "/metrics", headers: { host: "evil.example" } }, (response) => {
              response.resume()
              resolve(response.statusCode ?? 0)
            })
            request.on("error", reject)
            request.end()
          })
        )
      )
      assert.strictEqual(status, 403)
    }))
})
