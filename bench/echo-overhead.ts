/**
 * What the gateway costs: the median latency of an `echo` tool call made through mcpx-fx's
 * gateway in-process, against the same call made by a plain client (the official MCP SDK's)
 * straight to the same stdio fixture, measured in one run on one machine, reported as a ratio.
 * Also the CLI's cold start next to `node -e 0`.
 *
 * Run with `npm run bench`. Not part of `npm test`: timings belong in ratios, not assertions.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Config, layerSettings } from "@mcpx-fx/config/Config"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import { PendingCalls } from "@mcpx-fx/gateway/PendingCalls"
import { EraCache } from "@mcpx-fx/upstream/era/EraCache"
import { Negotiator } from "@mcpx-fx/upstream/era/Negotiator"
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import { Prober } from "@mcpx-fx/upstream/era/Prober"
import * as TransportLayer from "@mcpx-fx/upstream/transport/TransportLayer"
import { UpstreamAuth } from "@mcpx-fx/upstream/auth/UpstreamAuth"
import { ProcessGroups } from "@mcpx-fx/upstream/os/ProcessGroups"
import { ToolCatalog } from "@mcpx-fx/gateway/ToolCatalog"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"

// This file runs bundled, from bench/dist/.
const root = fileURLToPath(new URL("../..", import.meta.url))
const fixture = join(root, "packages/testing/dist/era-server.js")
const cli = join(root, "packages/cli/dist/mcpx-fx.js")
const calls = Number(process.env.BENCH_CALLS ?? 300)
const starts = Number(process.env.BENCH_STARTS ?? 10)

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

const timeEach = async (n: number, once: () => Promise<unknown>): Promise<ReadonlyArray<number>> => {
  for (let i = 0; i < 20; i++) await once() // warm-up: JIT, the upstream's first start
  const out: Array<number> = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await once()
    out.push(performance.now() - t0)
  }
  return out
}

const direct = async (): Promise<ReadonlyArray<number>> => {
  const client = new Client({ name: "bench-direct", version: "0" })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [fixture, "--mode", "legacy-32601"] }))
  try {
    return await timeEach(calls, () => client.callTool({ name: "echo", arguments: { message: "ping" } }))
  } finally {
    await client.close()
  }
}

const throughGateway = async (): Promise<ReadonlyArray<number>> => {
  const dir = mkdtempSync(join(tmpdir(), "mcpx-bench-"))
  const file = join(dir, "mcpx.json")
  writeFileSync(file, JSON.stringify({ mcpServers: { bench: { command: process.execPath, args: [fixture, "--mode", "legacy-32601"] } } }))
  const layer = Gateway.layer.pipe(
    Layer.provide(PendingCalls.layer),
    Layer.provide(layerSettings({ env: {}, flags: {} })),
    Layer.provideMerge(Config.layer({ configFlag: file, env: {}, cwd: dir, home: dir })),
    Layer.provide(
      Pool.layer.pipe(
        Layer.provideMerge(Prober.layer),
        Layer.provideMerge(EraCache.layerMemory),
        Layer.provide(Negotiator.layer),
        Layer.provide(TransportLayer.layer()),
        Layer.provide(Layer.mergeAll(FetchHttpClient.layer, UpstreamAuth.none, ProcessGroups.layerNone))
      )
    ),
    Layer.provide(ToolCatalog.layerMemory),
    Layer.provide(NodeContext.layer)
  )
  try {
    return await Effect.runPromise(
      Effect.gen(function*() {
        const gateway = yield* Gateway
        const once = gateway.callTool({}, "bench__echo", { message: "ping" })
        for (let i = 0; i < 20; i++) yield* once // warm-up, as timeEach does for the direct client
        const out: Array<number> = []
        for (let i = 0; i < calls; i++) {
          const t0 = performance.now()
          yield* once
          out.push(performance.now() - t0)
        }
        return out
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const coldStart = (args: ReadonlyArray<string>): ReadonlyArray<number> => {
  const out: Array<number> = []
  for (let i = 0; i < starts; i++) {
    const t0 = performance.now()
    const r = spawnSync(process.execPath, args, { stdio: "ignore" })
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}`)
    out.push(performance.now() - t0)
  }
  return out
}

const main = async () => {
  const plain = median(await direct())
  const gateway = median(await throughGateway())
  const node = median(coldStart(["-e", "0"]))
  const cliStart = median(coldStart([cli, "--version"]))
  const rows: ReadonlyArray<readonly [string, string, string, string]> = [
    ["measure", "baseline (median)", "mcpx-fx (median)", "ratio"],
    [`echo call, ${calls} calls`, `${plain.toFixed(3)} ms (SDK client, direct)`, `${gateway.toFixed(3)} ms (gateway)`, `${(gateway / plain).toFixed(2)}x`],
    [`cold start, ${starts} runs`, `${node.toFixed(1)} ms (node -e 0)`, `${cliStart.toFixed(1)} ms (mcpx-fx --version)`, `${(cliStart / node).toFixed(2)}x`]
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  for (const r of rows) process.stdout.write(r.map((c, i) => c.padEnd(widths[i]!)).join("  ") + "\n")
  process.exit(0)
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`)
  process.exit(1)
})
