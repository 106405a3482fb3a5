/**
 * `npm run bench:profile`: the mcpx-fx daemon under `node --cpu-prof` while it serves modern
 * tools/call at c=16 (or `--legacy` for a legacy session), and where its CPU went: self time by
 * source file (through the bundle's source map) and by function. What to optimise is read from
 * here, before and after.
 *
 *   options: --seconds S (default 10) --legacy --keep (leave the .cpuprofile in out/profile/)
 *   --upstream legacy|dual|http|http-dual (the upstream the daemon fronts, bench/lib/upstreams.ts; default legacy)
 *            --no-profile (only the CPU per call, three runs, without the profiler's own cost)
 *            --concurrency C (default 16; 1 shows what a call costs when each one wakes the process)
 *            --top N (functions shown, default 40; files shown, three quarters of that)
 *            --build DIR (another build's daemon: DIR holds its mcpx-fx.js and its source map)
 *            --target minimal (the minimal gateway, bench/minimal-gateway.ts, instead of the daemon:
 *            the same load on the reference, to see which of a call's costs mcpx-fx adds)
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { runLoad } from "./lib/load.js"
import { cpuMs } from "./lib/proc.js"
import { readSourceMap, shorten, type SourceLookup } from "./lib/sourcemap.js"
import { fmt } from "./lib/stats.js"
import { pathsFrom, startMcpxFx, startMinimal, withBuild } from "./lib/targets.js"
import { parseUpstreams, startUpstream, stoppingOnFailure } from "./lib/upstreams.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const argv = process.argv.slice(2)
const buildAt = argv.indexOf("--build")
const paths = buildAt < 0 ? pathsFrom(root) : withBuild(pathsFrom(root), argv[buildAt + 1]!)
const seconds = Number(argv[argv.indexOf("--seconds") + 1] ?? 10) || 10
const legacy = argv.includes("--legacy")
const keep = argv.includes("--keep")
const profiling = !argv.includes("--no-profile")
const concurrency = Number(argv[argv.indexOf("--concurrency") + 1] ?? 16) || 16
const topAt = argv.indexOf("--top")
const shown = topAt < 0 ? 40 : Number(argv[topAt + 1]) || 40
const targetAt = argv.indexOf("--target")
const minimal = targetAt >= 0 && argv[targetAt + 1] === "minimal"
if (targetAt >= 0 && !minimal) throw new Error(`--target takes minimal; got ${argv[targetAt + 1]}`)

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly hitCount?: number
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
}

const main = async () => {
  const dir = join(root, "out/profile")
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const at = argv.indexOf("--upstream")
  const upstream = await startUpstream(paths, parseUpstreams(at < 0 ? "legacy" : argv[at + 1])[0]!)
  const flags = profiling ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : []
  const daemon = await stoppingOnFailure(upstream, minimal ? startMinimal(paths, upstream.spec, flags) : startMcpxFx(paths, ["bench"], flags, upstream.spec))
  let calls = 0
  let cpu = 0
  try {
    const shape = legacy ? await daemon.legacy() : daemon.modern
    await runLoad(shape, { concurrency, durationMs: 2000 })
    for (let run = 0; run < (profiling ? 1 : 3); run++) {
      const before = cpuMs(daemon.pid)
      const r = await runLoad(shape, { concurrency, durationMs: seconds * 1000 })
      cpu = cpuMs(daemon.pid) - before
      calls = r.calls
      process.stdout.write(`${r.calls} calls in ${fmt(r.seconds, 1)} s: ${fmt(r.rps, 0)}/s, ${fmt(cpu / r.calls, 3)} ms CPU per call\n`)
    }
  } finally {
    await daemon.stop()
    await upstream.stop()
  }
  if (!profiling) return
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))
  if (file === undefined) throw new Error(`no profile in ${dir}`)
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile
  // Each bundle file has its map beside it (the CLI's code runs from dist/mcpx-fx-main.cjs).
  const maps = new Map<string, SourceLookup | undefined>()
  const lookupOf = (url: string): SourceLookup | undefined => {
    if (!maps.has(url)) {
      const file = url.startsWith("file:") ? fileURLToPath(url) : url
      maps.set(url, url !== "" && existsSync(`${file}.map`) ? readSourceMap(`${file}.map`) : undefined)
    }
    return maps.get(url)
  }
  const total = profile.samples.length
  const byFile = new Map<string, number>()
  const byFunction = new Map<string, number>()
  const hits = new Map<number, number>()
  for (const s of profile.samples) hits.set(s, (hits.get(s) ?? 0) + 1)
  for (const node of profile.nodes) {
    const n = hits.get(node.id) ?? 0
    if (n === 0) continue
    const f = node.callFrame
    const lookup = lookupOf(f.url)
    const where = lookup !== undefined
      ? shorten(lookup.sourceOf(f.lineNumber, f.columnNumber) ?? "bundle")
      : f.url === ""
      ? `(${f.functionName || "native"})`
      : shorten(f.url.replace(/^file:\/\//, ""))
    byFile.set(where, (byFile.get(where) ?? 0) + n)
    const name = `${f.functionName || "(anonymous)"}  ${where}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + n)
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, k).map(([key, n]) => `${fmt((100 * n) / total, 1).padStart(5)} %  ${key}`)
  process.stdout.write(`\nself time by source file (${total} samples, ${fmt((profile.endTime - profile.startTime) / 1e6, 1)} s):\n`)
  process.stdout.write(`${top(byFile, Math.round(shown * 0.75)).join("\n")}\n\nself time by function:\n${top(byFunction, shown).join("\n")}\n`)
  if (calls > 0) process.stdout.write(`\n(${fmt(cpu / calls, 3)} ms CPU per call over the measured run)\n`)
  if (!keep) rmSync(dir, { recursive: true, force: true })
  else process.stdout.write(`profile kept in ${join(dir, file)}\n`)
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`profile failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
    process.exit(1)
  }
)
