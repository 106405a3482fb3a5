/**
 * `npm run bench`: mcpx-fx against a direct stdio client, a trivial Node HTTP server (the floor),
 * a minimal Node gateway (bench/minimal-gateway.ts) and punkpeye/mcp-proxy, all up at once in one
 * process tree, in front of the same upstream; then again in front of each other upstream
 * (bench/lib/upstreams.ts: legacy-only stdio, dual-era stdio, Streamable HTTP).
 *
 * Each round runs every scenario (modern 2026-07-28 tools/call at c=1, 16 and 64; a legacy
 * 2025-11-25 session at c=16) on every target, in an order that rotates from round to round, so
 * the machine's load falls on all of them alike; ratios are taken within a round and their median
 * reported. CPU per call is read from /proc/<pid>/stat of each gateway process, RSS sampled during
 * each run. Then cold starts against `node -e 0`, the daemon's memory with 50 started upstreams,
 * and a long run for memory growth. The result is written to docs/performance.md.
 *
 *   npm run bench                      3 rounds of 3 s per run per upstream, 500k-call soak; writes the doc
 *   npm run bench -- --quick           1 round of 1 s, no soak, prints only (for development)
 *   npm run bench -- --cold-only       only the cold starts, printed with the load average (for development)
 *   options: --rounds N --seconds S --soak CALLS --starts N --write / --no-write
 *            --only mcpx-fx,mcp-proxy,minimal,floor,direct
 *            --upstream legacy,dual,http   which upstreams, in this order (default all three); the
 *                                          first is the one the memory, soak and issue-11 targets use
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { flag, option } from "./lib/args.js"
import { type Command, peakRssOf, timeOnce, writeHwmHook } from "./lib/coldstart.js"
import { census, grown, liveHeapMb, openInspector } from "./lib/inspector.js"
import { type LoadResult, type RequestShape, runLoad } from "./lib/load.js"
import { ensurePeers } from "./lib/peers.js"
import { cpuMs, rssMb, sampleRss } from "./lib/proc.js"
import { type Measurement, renderCold, renderReport, type Report, type UpstreamResults, writeReport } from "./lib/report.js"
import { median, quantile, rotate } from "./lib/stats.js"
import { runStdioLoad, startStdio, type StdioClient } from "./lib/stdio-client.js"
import { modernShape, pathsFrom, startFloor, startMcpProxy, startMcpxFx, startMinimal, type Target, warmDaemonCache, writeConfig } from "./lib/targets.js"
import { parseUpstreams, startUpstream, type Upstream, upstreamLabel } from "./lib/upstreams.js"

// This file runs bundled, from bench/dist/.
const root = fileURLToPath(new URL("../..", import.meta.url))
const paths = pathsFrom(root)

const quick = flag("quick")
const rounds = Number(option("rounds") ?? (quick ? 1 : 3))
const seconds = Number(option("seconds") ?? (quick ? 1 : 3))
const soakCalls = Number(option("soak") ?? (quick ? 0 : 500_000))
const starts = Number(option("starts") ?? (quick ? 3 : 10))
const write = flag("write") || (!quick && !flag("no-write"))
const only = option("only")?.split(",")
const upstreamKinds = parseUpstreams(option("upstream"))
if (upstreamKinds.includes("http-dual")) {
  throw new Error("--upstream http-dual is for bench:compare, bench:ops and bench:profile: the minimal gateway cannot front it")
}
const wanted = (name: string) => only === undefined || only.includes(name)

const log = (s: string) => process.stderr.write(`${s}\n`)

export const Scenarios = [
  { id: "modern-c1", label: "modern c=1", concurrency: 1, legacy: false },
  { id: "modern-c16", label: "modern c=16", concurrency: 16, legacy: false },
  { id: "modern-c64", label: "modern c=64", concurrency: 64, legacy: false },
  { id: "legacy-c16", label: "legacy session c=16", concurrency: 16, legacy: true }
] as const
export type ScenarioId = (typeof Scenarios)[number]["id"]

/** A gateway target's run of one scenario, with its process's CPU and memory over the run. */
const measureHttp = async (target: Target, shape: RequestShape, concurrency: number): Promise<Measurement> => {
  const durationMs = seconds * 1000
  const cpuBefore = { value: 0 }
  const sampler = sampleRss(target.pid)
  const result = await runLoad(shape, {
    concurrency,
    durationMs,
    // A few calls per connection first, so the connections and the gateway's per-connection state exist.
    warmupCalls: concurrency * 4,
    onStart: () => {
      cpuBefore.value = cpuMs(target.pid)
    }
  })
  const cpu = cpuMs(target.pid) - cpuBefore.value
  return summarize(result, cpu / result.calls, sampler.stop())
}

/**
 * How long the daemon is left alone before its RSS counts as idle. Some seconds after its last
 * allocation V8's memory reducer gives back the young generation that the start and the calls
 * grew, which a daemon nobody calls does not hold: ~10 s after one call, ~24 s after fifty
 * upstreams were started. A minute leaves it room (15 s with --quick).
 */
const SettleMs = quick ? 15_000 : 60_000

const summarize = (r: LoadResult, cpuPerCall: number | undefined, maxRss: number | undefined): Measurement => ({
  rps: r.rps,
  calls: r.calls,
  p50: quantile(Array.from(r.latencies), 0.5),
  p99: quantile(Array.from(r.latencies), 0.99),
  ...(cpuPerCall === undefined ? {} : { cpuPerCall }),
  ...(maxRss === undefined ? {} : { maxRss })
})

/**
 * The minimal gateway and mcp-proxy in front of `upstream` (mcp-proxy only in front of a stdio one),
 * each put in `into` as soon as it is up, so a later one that fails to start leaves it to be stopped.
 */
const startGateways = async (upstream: Upstream, into: Array<Target>): Promise<void> => {
  if (wanted("minimal")) into.push(await startMinimal(paths, upstream.spec))
  if (wanted("mcp-proxy") && "stdio" in upstream.spec) into.push(await startMcpProxy(paths, upstream.spec))
}

/**
 * Every scenario on every target (and the direct client), `rounds` times in rotating order, after a
 * warm-up; RSS after the warm-up goes into `idleRss`. Answers the measurements by target and scenario.
 */
const runRounds = async (
  kind: string,
  targets: ReadonlyArray<Target>,
  direct: StdioClient | undefined,
  idleRss: Record<string, number>
): Promise<{ readonly names: ReadonlyArray<string>; readonly results: Record<string, Record<string, Array<Measurement>>> }> => {
  const results: Record<string, Record<string, Array<Measurement>>> = {}
  const record = (target: string, scenario: string, m: Measurement) => {
    const byScenario = (results[target] ??= {})
    ;(byScenario[scenario] ??= []).push(m)
  }
  // Legacy sessions are opened once per target and kept for every round, as a host keeps its session.
  const legacyShapes = new Map<string, RequestShape>()
  for (const t of targets) legacyShapes.set(t.name, await t.legacy())

  log(`bench: warming up (${kind} upstream)`)
  for (const t of targets) {
    await runLoad(t.modern, { concurrency: 16, durationMs: quick ? 500 : 2000 })
    await runLoad(legacyShapes.get(t.name)!, { concurrency: 16, durationMs: quick ? 250 : 1000 })
  }
  if (direct !== undefined) await runStdioLoad(direct, { concurrency: 16, durationMs: 1000 })
  for (const t of targets) idleRss[`${t.name} (after warm-up)`] = rssMb(t.pid)

  const names = [...(direct !== undefined ? ["direct"] : []), ...targets.map((t) => t.name)]
  for (let round = 0; round < rounds; round++) {
    for (const [si, scenario] of Scenarios.entries()) {
      for (const name of rotate(names, round + si)) {
        if (name === "direct") {
          if (scenario.legacy || direct === undefined) continue
          const r = await runStdioLoad(direct, { concurrency: scenario.concurrency, durationMs: seconds * 1000, warmupCalls: 64 })
          record("direct", scenario.id, summarize(r, undefined, undefined))
          continue
        }
        const t = targets.find((x) => x.name === name)!
        const shape = scenario.legacy ? legacyShapes.get(t.name)! : t.modern
        record(t.name, scenario.id, await measureHttp(t, shape, scenario.concurrency))
      }
      log(`bench: ${kind} upstream, round ${round + 1}/${rounds} ${scenario.label} done`)
    }
  }
  return { names, results }
}

const main = async () => {
  if (!existsSync(paths.cli)) throw new Error(`no CLI bundle at ${paths.cli}; run npm run bundle`)
  if (flag("cold-only")) {
    const load = (l: ReadonlyArray<number>) => l.map((v) => v.toFixed(2)).join(" / ")
    const before = os.loadavg()
    const cold = await coldStarts()
    process.stdout.write(`${renderCold(cold)}\n\nLoad average (1 / 5 / 15 min) at the start ${load(before)}, at the end ${load(os.loadavg())}.\n`)
    return
  }
  ensurePeers(root, paths.mcpProxy, log)
  const loadAtStart = os.loadavg()
  const startedAt = new Date()

  // ---- the targets in front of the first upstream, all up at once
  const first = await startUpstream(paths, upstreamKinds[0]!)
  // Everything started from here on is stopped however the run ends: a target that fails to start
  // must not leave the others running under every later measurement.
  const targets: Array<Target> = []
  let direct: StdioClient | undefined
  try {
    log(`bench: starting the targets (${first.kind} upstream)`)
    direct = wanted("direct") && "stdio" in first.spec ? await startStdio(process.execPath, first.spec.stdio) : undefined
    if (wanted("floor")) targets.push(await startFloor(paths))
    await startGateways(first, targets)
    let mcpx: (Target & { readonly stderrTail: () => string }) | undefined
    const idleRss: Record<string, number> = {}
    if (wanted("mcpx-fx")) {
      await warmDaemonCache(paths, first.spec)
      // The inspector stays closed until the long run opens it (SIGUSR1), so the rounds run without it.
      mcpx = await startMcpxFx(paths, ["bench"], ["--inspect-port=0"], first.spec)
      targets.push(mcpx)
      await new Promise((r) => setTimeout(r, 500))
      idleRss["mcpx-fx (started, nothing called)"] = rssMb(mcpx.pid)
      // Idle as a daemon mostly is: its upstream started by a call, then nothing.
      await runLoad(mcpx.modern, { concurrency: 1, durationMs: 10_000, maxCalls: 1 })
      await new Promise((r) => setTimeout(r, 1000))
      idleRss["mcpx-fx (1 s after its first call)"] = rssMb(mcpx.pid)
      await new Promise((r) => setTimeout(r, SettleMs - 1000))
      idleRss["mcpx-fx (idle)"] = rssMb(mcpx.pid)
    }

    const { names, results } = await runRounds(first.kind, targets, direct, idleRss)
    const byUpstream: Array<UpstreamResults> = [{ kind: first.kind, label: upstreamLabel[first.kind], targets: names, results }]
    const floorRuns = results["floor"]
    // ---- the other upstreams, each with its own gateways (the floor has no upstream: measured once)
    for (const kind of upstreamKinds.slice(1)) {
      const upstream = await startUpstream(paths, kind)
      const more: Array<Target> = []
      let moreDirect: StdioClient | undefined
      try {
        log(`bench: starting the targets (${kind} upstream)`)
        moreDirect = wanted("direct") && "stdio" in upstream.spec ? await startStdio(process.execPath, upstream.spec.stdio) : undefined
        await startGateways(upstream, more)
        if (wanted("mcpx-fx")) more.push(await startMcpxFx(paths, ["bench"], [], upstream.spec))
        const r = await runRounds(kind, more, moreDirect, {})
        byUpstream.push({
          kind,
          label: upstreamLabel[kind],
          targets: r.names,
          results: floorRuns === undefined ? r.results : { ...r.results, floor: floorRuns }
        })
      } finally {
        for (const t of more) await t.stop()
        await moreDirect?.close()
        await upstream.stop()
      }
    }
    for (const t of targets) idleRss[`${t.name} (after the rounds)`] = rssMb(t.pid)

    // ---- memory over a long run
    let soak: Report["soak"]
    if (soakCalls > 0 && mcpx !== undefined) {
      log(`bench: ${soakCalls} calls for memory growth`)
      // The live heap after full collections at both ends: RSS alone cannot tell a slow leak
      // from the young generation's and old space's sizes at the time.
      const inspector = await openInspector(mcpx.pid, mcpx.stderrTail)
      const heapBefore = await liveHeapMb(inspector)
      const rssBefore = rssMb(mcpx.pid)
      const samples: Array<{ calls: number; rss: number }> = [{ calls: 0, rss: rssBefore }]
      let done = 0
      // Fifty samples: one swings with the young generation's size, so growth is read from many.
      const step = Math.max(1, Math.round(soakCalls / 50))
      while (done < soakCalls) {
        const r = await runLoad(mcpx.modern, { concurrency: 16, durationMs: 600_000, maxCalls: Math.min(step, soakCalls - done) })
        done += r.calls
        samples.push({ calls: done, rss: rssMb(mcpx.pid) })
      }
      const heapAfter = await liveHeapMb(inspector)
      const rssAfter = rssMb(mcpx.pid)
      // What a tenth more calls leave in the heap, by heap snapshots on either side of them (V8
      // collects all it can before a snapshot): taken after the RSS samples, since writing a
      // snapshot leaves RSS ~100 MB higher.
      const censusCalls = Math.max(1, Math.round(soakCalls / 10))
      const first = await census(inspector)
      await runLoad(mcpx.modern, { concurrency: 16, durationMs: 600_000, maxCalls: censusCalls })
      const second = await census(inspector)
      inspector.close()
      soak = {
        calls: done,
        samples,
        liveHeapMb: [heapBefore, heapAfter],
        rssAfterGcMb: [rssBefore, rssAfter],
        grown: { calls: censusCalls, kinds: grown(first, second, 8) }
      }
    }

    // ---- fifty started upstreams
    let fifty: number | undefined
    let fiftyAtOnce: number | undefined
    if (wanted("mcpx-fx")) {
      log("bench: the daemon with 50 started upstreams")
      const names50 = Array.from({ length: 50 }, (_, i) => `s${i}`)
      const many = await startMcpxFx(paths, names50)
      try {
        for (const n of names50) {
          await runLoad(modernShape(many.modern.url, `${n}__echo`), { concurrency: 1, durationMs: 60_000, maxCalls: 2 })
        }
        await new Promise((r) => setTimeout(r, 500))
        fiftyAtOnce = rssMb(many.pid)
        await new Promise((r) => setTimeout(r, SettleMs - 500))
        fifty = rssMb(many.pid)
      } finally {
        await many.stop()
      }
    }

    // ---- cold starts
    log("bench: cold starts")
    const cold = await coldStarts()

    const report: Report = {
      startedAt: startedAt.toISOString(),
      machine: machine(),
      loadAtStart,
      loadAtEnd: os.loadavg(),
      rounds,
      seconds,
      quick,
      scenarios: Scenarios.map((s) => ({ id: s.id, label: s.label })),
      targets: names,
      results,
      byUpstream,
      idleRss,
      ...(fifty === undefined ? {} : { fiftyUpstreamsRss: fifty }),
      ...(fiftyAtOnce === undefined ? {} : { fiftyUpstreamsRssAtOnce: fiftyAtOnce }),
      ...(soak === undefined ? {} : { soak }),
      cold
    }
    const text = renderReport(report)
    process.stdout.write(text)
    if (write) {
      writeReport(join(root, "docs/performance.md"), text)
      log("bench: wrote docs/performance.md")
    }
  } finally {
    for (const t of targets) await t.stop()
    await direct?.close()
    await first.stop()
  }
}

const machine = (): Report["machine"] => {
  const cpus = os.cpus()
  let kernel = os.release()
  try {
    kernel = execFileSync("uname", ["-sr"], { encoding: "utf8" }).trim()
  } catch {
    // os.release() it is.
  }
  return {
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memoryGb: os.totalmem() / 1024 ** 3,
    node: process.version,
    kernel
  }
}

/** `node -e 0` and the CLI's commands, interleaved run by run; ratios are of same-round medians. */
const coldStarts = async (): Promise<Report["cold"]> => {
  const dir = mkdtempSync(join(os.tmpdir(), "mcpx-bench-cold-"))
  try {
    const config = writeConfig(dir, paths, ["bench"])
    const env = { MCPX_STATE_DIR: join(dir, "state") }
    mkdirSync(env.MCPX_STATE_DIR, { recursive: true })
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } }
    })
    const commands: ReadonlyArray<Command> = [
      { name: "node -e 0", args: ["-e", "0"] },
      { name: "mcpx-fx --version", args: [paths.cli, "--version"], env },
      { name: "mcpx-fx --help", args: [paths.cli, "--help"], env },
      { name: "mcpx-fx tools (one server, warm era cache)", args: [paths.cli, "tools", "--config", config], env },
      { name: "mcpx-fx serve (first answer)", args: [paths.cli, "serve", "--config", config], env, firstAnswerTo: initialize }
    ]
    // The era cache is warmed by a first run, which is not counted.
    await timeOnce(commands[3]!)
    const era = JSON.parse(readFileSync(join(env.MCPX_STATE_DIR, "upstream-eras.json"), "utf8")) as unknown
    if (typeof era !== "object" || era === null) throw new Error("the era cache was not written")
    const times: Record<string, Array<number>> = {}
    for (let i = 0; i < starts; i++) {
      for (const c of rotate(commands, i)) (times[c.name] ??= []).push(await timeOnce(c))
    }
    const hook = writeHwmHook(dir)
    const peakRss: Record<string, number> = {}
    for (const c of commands.slice(1)) peakRss[c.name] = await peakRssOf(c, hook, dir)
    peakRss["node -e 0"] = await peakRssOf(commands[0]!, hook, dir)
    return {
      runs: starts,
      medians: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])),
      // Each run's ratio to the `node -e 0` run of the same round.
      ratios: Object.fromEntries(
        commands.slice(1).map((c) => [c.name, median(times[c.name]!.map((t, i) => t / times["node -e 0"]![i]!))])
      ),
      peakRss
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    log(`bench failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
    process.exit(1)
  }
)
