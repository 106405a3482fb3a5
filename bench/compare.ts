/**
 * `npm run bench:compare -- --against DIR`: this checkout's daemon and another build's (DIR holds
 * that build's `mcpx-fx.js`, e.g. a copy of packages/cli/dist made before a change and kept inside
 * this checkout, such as scratchpad/base, where node finds its SQLite addon), both up at
 * once in front of their own copy of the same upstream, under modern tools/call at c=16 in
 * alternating runs. Reports each one's CPU per call and calls per second, and the same-round
 * ratios: a change to the call path is judged here, where the machine's load falls on both alike.
 *
 *   options: --against DIR (required) --rounds N (default 8) --seconds S (default 3) --concurrency C (16)
 *            --capabilities JSON (what the host declares, default {}; e.g. '{"elicitation":{}}' for a
 *            host that can be asked, whose calls run as pending calls)
 *            --legacy (calls in a legacy 2025-11-25 session, one per build, instead of modern calls)
 *            --stdio-host (each build as a stdio host, \`mcpx-fx serve\`, called in a 2025-11-25 session on its stdin)
 *            --upstream legacy|dual|http|http-dual (what both daemons front, bench/lib/upstreams.ts; default legacy)
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { flag, option } from "./lib/args.js"
import { type RequestShape, runLoad } from "./lib/load.js"
import { cpuMs } from "./lib/proc.js"
import { fmt, median } from "./lib/stats.js"
import { runStdioLoad, startStdio } from "./lib/stdio-client.js"
import { modernShape, type Paths, pathsFrom, startMcpxFx, type Target, type UpstreamSpec, withBuild, writeConfig } from "./lib/targets.js"
import { parseUpstreams, startUpstream } from "./lib/upstreams.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const against = option("against")
const rounds = Number(option("rounds") ?? 8) || 8
const seconds = Number(option("seconds") ?? 3) || 3
const concurrency = Number(option("concurrency") ?? 16) || 16
const capabilities = JSON.parse(option("capabilities") ?? "{}") as Record<string, unknown>
const legacy = flag("legacy")
const stdioHost = flag("stdio-host")
const upstreamKind = parseUpstreams(option("upstream") ?? "legacy")[0]!

interface Sample {
  readonly cpuPerCall: number
  readonly rps: number
}

// startMcpxFx's one server is "bench", so its echo tool is this; a legacy session is opened once per target.
const sessions = new Map<Target, RequestShape>()
const shapeOf = async (target: Target): Promise<RequestShape> => {
  if (!legacy) return modernShape(target.modern.url, "bench__echo", capabilities)
  const open = sessions.get(target) ?? await target.legacy()
  sessions.set(target, open)
  return open
}

/** One build under load: the process whose CPU is counted, and a run of calls on it. */
interface Gateway {
  readonly pid: number
  readonly run: (durationMs: number) => Promise<{ readonly calls: number; readonly rps: number }>
  readonly stop: () => Promise<void>
}

const daemon = async (paths: Paths, spec: UpstreamSpec): Promise<Gateway> => {
  const target = await startMcpxFx(paths, ["bench"], [], spec)
  return { pid: target.pid, run: async (durationMs) => runLoad(await shapeOf(target), { concurrency, durationMs }), stop: target.stop }
}

// `mcpx-fx serve` on its own copy of the upstream, in a state directory of its own.
const serve = async (paths: Paths, spec: UpstreamSpec): Promise<Gateway> => {
  const dir = mkdtempSync(join(tmpdir(), "mcpx-bench-serve-"))
  const config = writeConfig(dir, paths, ["bench"], spec)
  const client = await startStdio(process.execPath, [paths.cli, "serve", "--config", config], { MCPX_STATE_DIR: join(dir, "state") })
  return {
    pid: client.pid,
    run: (durationMs) => runStdioLoad(client, { concurrency, durationMs, tool: "bench__echo" }),
    stop: async () => {
      await client.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

const measure = async (gateway: Gateway): Promise<Sample> => {
  const before = cpuMs(gateway.pid)
  const r = await gateway.run(seconds * 1000)
  return { cpuPerCall: (cpuMs(gateway.pid) - before) / r.calls, rps: r.rps }
}

const main = async () => {
  if (against === undefined) throw new Error("--against DIR is required: the directory of the other build's mcpx-fx.js")
  const paths = pathsFrom(root)
  const other = withBuild(paths, against)
  const samples = { here: [] as Array<Sample>, there: [] as Array<Sample> }
  // Stopped however the run ends, the gateways before their upstream: a build that fails to start
  // must not leave the other's daemon running to load the machine of every later measurement.
  const started: Array<{ readonly stop: () => Promise<void> }> = []
  try {
    const upstream = await startUpstream(paths, upstreamKind)
    started.push(upstream)
    const start = stdioHost ? serve : daemon
    const here = await start(paths, upstream.spec)
    started.push(here)
    const there = await start(other, upstream.spec)
    started.push(there)
    for (const g of [here, there]) await g.run(2000)
    for (let round = 0; round < rounds; round++) {
      // Who goes first alternates, so neither always meets the other's leftovers.
      const order = round % 2 === 0 ? (["here", "there"] as const) : (["there", "here"] as const)
      for (const which of order) samples[which].push(await measure(which === "here" ? here : there))
      const [a, b] = [samples.here[round]!, samples.there[round]!]
      process.stdout.write(
        `round ${round + 1}: this build ${fmt(a.cpuPerCall, 3)} ms/call ${fmt(a.rps, 0)}/s; ` +
          `the other ${fmt(b.cpuPerCall, 3)} ms/call ${fmt(b.rps, 0)}/s\n`
      )
    }
  } finally {
    for (const one of started.reverse()) await one.stop()
  }
  const ratio = (f: (s: Sample) => number) => median(samples.here.map((s, i) => f(s) / f(samples.there[i]!)))
  process.stdout.write(
    `\n${
      stdioHost ? "stdio host (serve)" : legacy ? "legacy session" : "modern"
    }, ${upstreamKind} upstream, c=${concurrency}, ${rounds} rounds of ${seconds} s: CPU per call, this ÷ other (same round) ${
      fmt(ratio((s) => s.cpuPerCall), 3)
    }×; ` +
      `calls/s ${fmt(ratio((s) => s.rps), 3)}×; medians ${fmt(median(samples.here.map((s) => s.cpuPerCall)), 3)} vs ` +
      `${fmt(median(samples.there.map((s) => s.cpuPerCall)), 3)} ms\n`
  )
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench:compare failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
    process.exit(1)
  }
)
