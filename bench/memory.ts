/**
 * `npm run bench:memory`: the daemon's memory against what it costs in speed, for sets of Node
 * flags side by side. Each variant is its own daemon (all up at once, each in front of its own
 * copy of the upstream). First each gets one call, and its RSS is read 1 s and 15 s after it (by
 * then V8's memory reducer has run: what a daemon holds when it is idle). Then every round
 * measures each one in rotating order: the highest RSS under modern tools/call at c=64, calls per
 * second, CPU per call and p99/p50. Ratios are to the first variant, same round.
 *
 *   options: --variant "FLAGS" (repeatable, space-separated node flags; "" is plain node, the
 *            default first variant; a word --build=DIR runs DIR/mcpx-fx.js, another build, instead
 *            of this checkout's) --rounds N (default 4) --seconds S (default 5) --concurrency C (64)
 */
import { fileURLToPath } from "node:url"
import { option, options } from "./lib/args.js"
import { runLoad } from "./lib/load.js"
import { cpuMs, rssMb, sampleRss } from "./lib/proc.js"
import { fmt, median, quantile, rotate } from "./lib/stats.js"
import { pathsFrom, startMcpxFx, type Target, withBuild } from "./lib/targets.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const rounds = Number(option("rounds") ?? 4) || 4
const seconds = Number(option("seconds") ?? 5) || 5
const concurrency = Number(option("concurrency") ?? 64) || 64
const given = options("variant")
const variants = given.length === 0 ? [""] : given
const words = (v: string) => v.split(" ").filter((f) => f.length > 0)
const BuildWord = "--build="
const flagsOf = (v: string) => words(v).filter((w) => !w.startsWith(BuildWord))
const buildOf = (v: string) => words(v).find((w) => w.startsWith(BuildWord))?.slice(BuildWord.length)

interface Sample {
  readonly peak: number
  readonly rps: number
  readonly cpuPerCall: number
  readonly tail: number
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

const main = async () => {
  const paths = pathsFrom(root)
  const daemons: Array<Target> = []
  const samples = variants.map(() => [] as Array<Sample>)
  let justAfter: Array<number> = []
  let settled: Array<number> = []
  try {
    for (const v of variants) {
      const build = buildOf(v)
      daemons.push(await startMcpxFx(build === undefined ? paths : withBuild(paths, build), ["bench"], flagsOf(v)))
    }
    for (const d of daemons) await runLoad(d.modern, { concurrency: 1, durationMs: 10_000, maxCalls: 1 })
    await pause(1000)
    justAfter = daemons.map((d) => rssMb(d.pid))
    await pause(14_000)
    settled = daemons.map((d) => rssMb(d.pid))
    for (const d of daemons) await runLoad(d.modern, { concurrency, durationMs: 2000 })
    for (let round = 0; round < rounds; round++) {
      for (const i of rotate(variants.map((_, j) => j), round)) {
        const d = daemons[i]!
        const rss = sampleRss(d.pid, 50)
        const before = cpuMs(d.pid)
        const r = await runLoad(d.modern, { concurrency, durationMs: seconds * 1000 })
        const peak = rss.stop()
        const cpuPerCall = (cpuMs(d.pid) - before) / r.calls
        const latencies = Array.from(r.latencies)
        const tail = quantile(latencies, 0.99) / quantile(latencies, 0.5)
        samples[i]!.push({ peak, rps: r.rps, cpuPerCall, tail })
        await pause(1000)
      }
      process.stdout.write(`round ${round + 1}/${rounds} done\n`)
    }
  } finally {
    await Promise.all(daemons.map((d) => d.stop()))
  }
  const med = (i: number, f: (s: Sample) => number) => median(samples[i]!.map(f))
  const ratio = (i: number, f: (s: Sample) => number) => median(samples[i]!.map((s, r) => f(s) / f(samples[0]![r]!)))
  process.stdout.write(`\nmodern c=${concurrency}, ${rounds} rounds of ${seconds} s; RSS 1 s and 15 s after one call, then the highest under load\n`)
  process.stdout.write(
    "| node flags | RSS 1 s after a call | RSS 15 s after | peak RSS c=64 | calls/s (÷ first) | CPU/call ms (÷ first) | p99/p50 |\n|---|---|---|---|---|---|---|\n"
  )
  variants.forEach((v, i) => {
    process.stdout.write(
      `| ${v === "" ? "(none)" : `\`${v}\``} | ${fmt(justAfter[i], 0)} MB | ${fmt(settled[i], 0)} MB | ${fmt(med(i, (s) => s.peak), 0)} MB | ` +
        `${fmt(med(i, (s) => s.rps), 0)} (${fmt(ratio(i, (s) => s.rps), 3)}×) | ` +
        `${fmt(med(i, (s) => s.cpuPerCall), 3)} (${fmt(ratio(i, (s) => s.cpuPerCall), 3)}×) | ${fmt(med(i, (s) => s.tail), 2)}× |\n`
    )
  })
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench:memory: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    process.exit(1)
  }
)
