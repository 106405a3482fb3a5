/**
 * `npm run bench:gc`: the daemon's garbage collection under modern tools/call load. A call's CPU
 * and its tail latency follow what it allocates and what of that outlives a scavenge, so this is
 * how a change to the call path is judged for memory, as `bench:ops` judges it for operations.
 *
 *   default   the daemon under `--trace-gc-nvp`: scavenges per second, their pauses, what each
 *             scavenge promoted per call, mark-compacts; the load's p50 and p99
 *   --alloc   the daemon's sampling heap profile (over the inspector): bytes per call allocated,
 *             split into what a scavenge collected and what was promoted and died in old space,
 *             and the functions (and source files) that allocate the most of each
 *   --tables  a census of the daemon's Map, Set, WeakMap and WeakSet tables (over the inspector):
 *             those written at least once per ten calls under load, with where each was first
 *             written. A long-lived table written per call is replaced as it grows and shrinks,
 *             and V8 links a replaced Map's or Set's table to its successor, so it carries calls
 *             into old space (@mcpx-fx/cancel/InFlight); this shows whether one is left.
 *
 *   options: --concurrency C (default 64) --seconds S (default 5) --warmup S (load before measuring, default 2)
 *            --top N (default 25)
 *            --keep (with --alloc: both sampled profiles in out/gc/, minor.heapprofile and
 *            major.heapprofile, for the allocation stacks; DevTools opens them)
 *            --node-flag FLAG (repeatable: e.g. --node-flag --max-semi-space-size=64)
 *            --upstream legacy|dual|http|http-dual (the upstream the daemon fronts, bench/lib/upstreams.ts; default legacy)
 *            --build DIR (another build's daemon: DIR holds its mcpx-fx.js, as for bench:compare)
 *            --legacy (the calls of one legacy host session, 2025-11-25, instead of modern calls)
 *            --asks (modern calls from a host that declares elicitation: they run in PendingCalls)
 *            --stdio-host (`mcpx-fx serve` instead of the daemon, called on its stdin by one 2025-11-25 host)
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { flag, option, options } from "./lib/args.js"
import { connect } from "./lib/inspector.js"
import { type LoadResult, type RequestShape, runLoad } from "./lib/load.js"
import { readSourceMap, shorten, type SourceLookup } from "./lib/sourcemap.js"
import { fmt, median, quantile } from "./lib/stats.js"
import { runStdioLoad, startStdio } from "./lib/stdio-client.js"
import { modernShape, openLegacySession, pathsFrom, withBuild, writeConfig } from "./lib/targets.js"
import { nvpPairs } from "./lib/gctrace.js"
import { parseUpstreams, startUpstream, stoppingOnFailure } from "./lib/upstreams.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const concurrency = Number(option("concurrency") ?? 64) || 64
// The calls of a legacy host session (initialize first, the session id on each) instead of modern ones.
const legacyHost = flag("legacy")
// A modern host that can be asked (it declares elicitation), whose calls run in PendingCalls.
const asks = flag("asks")
// `mcpx-fx serve` and its one host on the pipe, instead of the daemon and HTTP.
const stdioHost = flag("stdio-host")
const callsLabel = stdioHost ? "stdio host" : legacyHost ? "legacy session" : asks ? "modern (asks)" : "modern"
const seconds = Number(option("seconds") ?? 5) || 5
const warmupMs = 1000 * (Number(option("warmup") ?? 2) || 2)
const top = Number(option("top") ?? 25) || 25
const alloc = flag("alloc")
const tables = flag("tables")
const keep = flag("keep")
const nodeFlags = options("node-flag")
const build = option("build")
const upstreamKind = parseUpstreams(option("upstream") ?? "legacy")[0]!

interface Gateway {
  /** stdout lines other than the gateway's own JSON (the GC trace). */
  readonly lines: Array<string>
  /** The inspector's WebSocket URL, once the gateway printed it (with `--inspect`). */
  readonly inspector: () => string | undefined
  /** Calls `concurrency` at a time for `durationMs` (the first run opens what the calls need). */
  readonly load: (durationMs: number) => Promise<LoadResult>
  readonly stop: () => Promise<void>
}

const paths = build === undefined ? pathsFrom(root) : withBuild(pathsFrom(root), build)

/** The gateway under `flags`: the daemon, or `mcpx-fx serve` with `--stdio-host`. */
const start = (flags: ReadonlyArray<string>): Promise<Gateway> => (stdioHost ? startServe(flags) : startDaemon(flags))

const startServe = async (flags: ReadonlyArray<string>): Promise<Gateway> => {
  const upstream = await startUpstream(paths, upstreamKind)
  const dir = mkdtempSync(join(tmpdir(), "mcpx-bench-gc-"))
  const config = writeConfig(dir, paths, ["bench"], upstream.spec)
  const lines: Array<string> = []
  let stderr = ""
  const client = await stoppingOnFailure(
    upstream,
    startStdio(process.execPath, [...flags, paths.cli, "serve", "--config", config], { MCPX_STATE_DIR: join(dir, "state") }, {
      otherLine: (line) => lines.push(line),
      stderr: (chunk) => {
        if (stderr.length < 10_000) stderr += chunk
      }
    })
  )
  return {
    lines,
    inspector: () => /ws:\/\/\S+/.exec(stderr)?.[0],
    load: (durationMs) => runStdioLoad(client, { concurrency, durationMs, tool: "bench__echo" }),
    stop: async () => {
      await client.close()
      await upstream.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** The daemon on one upstream, its stdout read line by line (the trace shares it with the JSON line). */
const startDaemon = async (flags: ReadonlyArray<string>): Promise<Gateway> => {
  const upstream = await startUpstream(paths, upstreamKind)
  const dir = mkdtempSync(join(tmpdir(), "mcpx-bench-gc-"))
  const config = writeConfig(dir, paths, ["bench"], upstream.spec)
  const child = spawn(process.execPath, [...flags, paths.cli, "daemon", "--config", config, "--daemon-port", "0", "--json"], {
    env: { ...process.env, MCPX_STATE_DIR: join(dir, "state") },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    try {
      process.kill(-child.pid!, "SIGTERM")
    } catch {
      // Already gone.
    }
    await exited
    await upstream.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  let stderr = ""
  child.stderr.setEncoding("utf8")
  child.stderr.on("data", (chunk: string) => {
    if (stderr.length < 10_000) stderr += chunk
  })
  const inspector = () => /ws:\/\/\S+/.exec(stderr)?.[0]
  return new Promise((resolve, reject) => {
    const lines: Array<string> = []
    let buffered = ""
    let url: URL | undefined
    child.once("exit", (code) => {
      if (url !== undefined) return
      void upstream.stop()
      reject(new Error(`the daemon exited ${code} before it was ready`))
    })
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      buffered += chunk
      for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
        const line = buffered.slice(0, at)
        buffered = buffered.slice(at + 1)
        if (url === undefined && line.startsWith("{")) {
          const mcp = new URL(String((JSON.parse(line) as { mcp: string }).mcp))
          url = mcp
          // The calls' shape, made once: a legacy session is opened by the first load.
          let shape: Promise<RequestShape> | undefined
          const load = async (durationMs: number) => {
            shape ??= legacyHost
              ? openLegacySession(mcp, "bench__echo")
              : Promise.resolve(modernShape(mcp, "bench__echo", asks ? { elicitation: {} } : {}))
            return runLoad(await shape, { concurrency, durationMs })
          }
          resolve({ lines, inspector, load, stop })
        } else lines.push(line)
      }
    })
  })
}

/** Loads the gateway for the warm-up. */
const warmUp = (gateway: Gateway) => gateway.load(warmupMs)

const trace = async () => {
  const gateway = await start(["--trace-gc-nvp", ...nodeFlags])
  try {
    await warmUp(gateway)
    gateway.lines.length = 0
    const r = await gateway.load(seconds * 1000)
    const gcs = gateway.lines.map(nvpPairs).filter((p) => p.has("gc"))
    const scavenges = gcs.filter((p) => p.get("gc") === "s")
    const marks = gcs.filter((p) => p.get("gc") === "mc" || p.get("gc") === "ms")
    const pauses = scavenges.map((p) => Number(p.get("pause")))
    const promoted = scavenges.reduce((sum, p) => sum + Number(p.get("promoted") ?? 0), 0)
    const allocated = scavenges.reduce((sum, p) => sum + Number(p.get("allocated") ?? 0), 0)
    // A process still warming up promotes what it keeps for good (feedback, code, caches) at every
    // scavenge, which a short warm-up at c=1 leaves in the window: the window's second half, once
    // settled, is shown apart (calls taken as evenly spread over the scavenges).
    const settled = scavenges.slice(Math.floor(scavenges.length / 2))
    const settledPromoted = settled.reduce((sum, p) => sum + Number(p.get("promoted") ?? 0), 0)
    const settledCalls = (r.calls * settled.length) / Math.max(1, scavenges.length)
    const latencies = Array.from(r.latencies)
    const p50 = quantile(latencies, 0.5)
    const p99 = quantile(latencies, 0.99)
    process.stdout.write(
      `${callsLabel} c=${concurrency}${nodeFlags.length > 0 ? ` (${nodeFlags.join(" ")})` : ""}, ${r.calls} calls in ${seconds} s: ` +
        `${fmt(r.rps, 0)}/s, p50 ${fmt(p50, 3)} ms, p99 ${fmt(p99, 3)} ms (${fmt(p99 / p50)}×)\n` +
        `scavenges: ${fmt(scavenges.length / r.seconds, 1)}/s, pause median ${fmt(median(pauses))} ms, ` +
        `max ${fmt(Math.max(...pauses))} ms, ${fmt((100 * pauses.reduce((a, b) => a + b, 0)) / (r.seconds * 1000), 1)} % of the time; ` +
        `allocated ${fmt(allocated / r.calls / 1024, 1)} KB and promoted ${fmt(promoted / r.calls / 1024, 1)} KB per call ` +
        `(${fmt(settledPromoted / Math.max(1, settledCalls) / 1024, 1)} KB in the window's second half)\n` +
        `mark-compacts: ${marks.length} (${fmt(marks.length / r.seconds, 2)}/s), pause median ${fmt(median(marks.map((p) => Number(p.get("pause")))))} ms\n`
    )
  } finally {
    await gateway.stop()
  }
}

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<ProfileNode>
}

/** One sampled run: what the profile holds, by allocation site, per call. */
const sampled = async (collectedBy: "minor" | "major") => {
  // Port 0: the inspector takes a free one and prints its URL (stderr), so runs never collide.
  const gateway = await start(["--inspect=127.0.0.1:0", ...nodeFlags])
  try {
    await warmUp(gateway)
    const cdp = await connect(gateway.inspector())
    await cdp.send("HeapProfiler.enable")
    await cdp.send("HeapProfiler.startSampling", {
      samplingInterval: 2048,
      includeObjectsCollectedByMinorGC: collectedBy === "minor",
      includeObjectsCollectedByMajorGC: collectedBy === "major"
    })
    const r = await gateway.load(seconds * 1000)
    const { profile } = await cdp.send<{ profile: { head: ProfileNode } }>("HeapProfiler.stopSampling")
    if (keep) {
      mkdirSync(join(root, "out/gc"), { recursive: true })
      writeFileSync(join(root, `out/gc/${collectedBy}.heapprofile`), JSON.stringify(profile))
    }
    cdp.close()
    const sites = new Map<string, number>()
    // Sites are named by function and source file, through the bundle's map beside it.
    const maps = new Map<string, SourceLookup | undefined>()
    const sourceOf = (f: ProfileNode["callFrame"]): string => {
      if (!maps.has(f.url)) {
        const file = f.url.startsWith("file:") ? fileURLToPath(f.url) : f.url
        maps.set(f.url, f.url !== "" && existsSync(`${file}.map`) ? readSourceMap(`${file}.map`) : undefined)
      }
      const mapped = maps.get(f.url)?.sourceOf(f.lineNumber, f.columnNumber)
      return mapped !== undefined ? shorten(mapped) : f.url === "" ? "(native)" : shorten(f.url.replace(/^file:\/\//, ""))
    }
    const walk = (n: ProfileNode) => {
      const f = n.callFrame
      const site = `${f.functionName || "(anonymous)"}  ${sourceOf(f)}`
      sites.set(site, (sites.get(site) ?? 0) + n.selfSize)
      n.children.forEach(walk)
    }
    walk(profile.head)
    return { calls: r.calls, sites }
  } finally {
    await gateway.stop()
  }
}

const allocation = async () => {
  // Collected by a scavenge (died young), then what was promoted and died in old space; the
  // profile also holds what is still live at the end, which is small against either.
  const young = await sampled("minor")
  const old = await sampled("major")
  const perCall = (s: { calls: number; sites: Map<string, number> }) => [...s.sites.values()].reduce((a, b) => a + b, 0) / s.calls
  process.stdout.write(
    `${callsLabel} c=${concurrency}: ${fmt(perCall(young) / 1024, 1)} KB per call allocated and collected young, ` +
      `${fmt(perCall(old) / 1024, 1)} KB per call collected in old space (sampled every 2 KB)\n\nwhere a call's young garbage is allocated:\n`
  )
  const list = (run: { calls: number; sites: Map<string, number> }) => {
    for (const [site, bytes] of [...run.sites].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`${fmt(bytes / run.calls, 0).padStart(7)} B  ${site}\n`)
    }
  }
  list(young)
  // What outlived two scavenges: the cost of a scavenge is what it copies, and this is what
  // moved to old space, to be found again by a mark-compact.
  process.stdout.write(`\nwhere what was promoted and died in old space is allocated:\n`)
  list(old)
}
// Evaluated in the gateway: counts every write to each table from now on, remembering the stack of
// its first; `census()` answers the tables written at least `min` times, most written first.
const CensusInstall = `(() => {
  const mark = Symbol("census"), seen = []
  for (const [proto, kind, names] of [[Map.prototype, "Map", ["set", "delete"]], [Set.prototype, "Set", ["add", "delete"]],
      [WeakMap.prototype, "WeakMap", ["set", "delete"]], [WeakSet.prototype, "WeakSet", ["add", "delete"]]]) {
    for (const name of names) {
      const original = proto[name]
      proto[name] = function (...args) {
        let entry = this[mark]
        if (entry === undefined && Object.isExtensible(this)) {
          entry = { kind, writes: 0, stack: new Error().stack.split("\\n").slice(2, 10) }
          Object.defineProperty(this, mark, { value: entry })
          seen.push(entry)
        }
        if (entry !== undefined) entry.writes++
        return original.apply(this, args)
      }
    }
  }
  globalThis.__census = (min) => JSON.stringify(seen.filter((e) => e.writes >= min).sort((a, b) => b.writes - a.writes))
})()`

const census = async () => {
  const gateway = await start(["--inspect=127.0.0.1:0", ...nodeFlags])
  try {
    await warmUp(gateway)
    const cdp = await connect(gateway.inspector())
    await cdp.send("Runtime.evaluate", { expression: CensusInstall })
    const r = await gateway.load(seconds * 1000)
    const { result } = await cdp.send<{ result: { value: string } }>("Runtime.evaluate", {
      expression: `__census(${Math.max(1, Math.floor(r.calls / 10))})`,
      returnByValue: true
    })
    cdp.close()
    const found = JSON.parse(result.value) as Array<{ kind: string; writes: number; stack: Array<string> }>
    const maps = new Map<string, SourceLookup | undefined>()
    // "at name (file:///…/x.cjs:13:4567)" as the function and the source file it came from.
    const frame = (line: string): string => {
      const m = /^\s*at (?:(.*?) \()?(.*?):(\d+):(\d+)\)?$/.exec(line)
      if (m === null) return line.trim()
      const [, name, url, row, column] = m as unknown as [string, string | undefined, string, string, string]
      const file = url.startsWith("file:") ? fileURLToPath(url) : url
      if (!maps.has(file)) maps.set(file, existsSync(`${file}.map`) ? readSourceMap(`${file}.map`) : undefined)
      const source = maps.get(file)?.sourceOf(Number(row) - 1, Number(column) - 1)
      return `${name ?? "(anonymous)"}  ${source !== undefined ? shorten(source) : shorten(url.replace(/^file:\/\//, ""))}`
    }
    process.stdout.write(
      `${callsLabel} c=${concurrency}, ${r.calls} calls: ${found.length} table(s) written at least once per ten calls` +
        `${found.length === 0 ? "" : " (writes per call; where first written)"}\n`
    )
    for (const t of found.slice(0, top)) {
      process.stdout.write(`\n${fmt(t.writes / r.calls, 2).padStart(6)}  ${t.kind}\n${t.stack.map((l) => `          ${frame(l)}\n`).join("")}`)
    }
  } finally {
    await gateway.stop()
  }
}
;(tables ? census() : alloc ? allocation() : trace()).then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench:gc failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
    process.exit(1)
  }
)
