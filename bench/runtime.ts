/**
 * `npm run bench:runtime`: what the Effect runtime itself costs on a call's shape, Effect 3 (the
 * one mcpx-fx runs on) beside Effect 4 (installed in bench/peers) and plain callbacks. One "call"
 * is what the daemon's does with its fiber: a fiber started for it, ~40 operations (steps chained
 * before and after, an uninterruptible stretch, a match on the outcome) around one suspension,
 * resumed on the event loop's next turn as an upstream's answer is. The same program for each,
 * written once against the API both versions share; the plain target does the same arithmetic
 * with callbacks and the same two turns, so its time is what is not the runtime's.
 *
 * Each target runs in a process of its own, in rotating order over the rounds. Reported per
 * call: wall and CPU time (each process's best of five runs, then the median over rounds), and
 * what it allocates, from the scavenges counted with the young generation's size fixed at 8 MB
 * (each one collects about one semi-space of allocation).
 *
 *   options: --calls N (per run, default 100000) --rounds R (default 4)
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { constants, type PerformanceEntry, PerformanceObserver } from "node:perf_hooks"
import { fileURLToPath, pathToFileURL } from "node:url"
import { option } from "./lib/args.js"
import { ensurePeers } from "./lib/peers.js"
import { fmt, median, rotate } from "./lib/stats.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const effect4 = join(root, "bench/peers/node_modules/effect/dist/Effect.js")
const calls = Number(option("calls") ?? 100_000) || 100_000
const rounds = Number(option("rounds") ?? 4) || 4
const semiSpaceMb = 8

/** An effect of either version, opaque here: only the runtime below makes and runs them. */
interface Eff {
  readonly _opaque: unique symbol
}

/** The part of `effect/Effect` the call uses, the same in Effect 3 and 4 but for the suspension. */
interface EffectApi {
  readonly succeed: (n: number) => Eff
  readonly flatMap: (self: Eff, f: (n: number) => Eff) => Eff
  readonly map: (self: Eff, f: (n: number) => number) => Eff
  readonly suspend: (f: () => Eff) => Eff
  readonly sync: (f: () => void) => Eff
  readonly failCause: (cause: unknown) => Eff
  readonly uninterruptibleMask: (f: (restore: (self: Eff) => Eff) => Eff) => Eff
  readonly matchCauseEffect: (self: Eff, cases: { onSuccess: (n: number) => Eff; onFailure: (cause: unknown) => Eff }) => Eff
  readonly runFork: (self: Eff) => unknown
}
/** Effect 3's `async`, Effect 4's `callback`: a suspension resumed by calling `resume`. */
type Suspend = (register: (resume: (answer: Eff) => void) => void) => Eff

type TargetName = "effect3" | "effect4" | "plain"
/** What a child reports: its best wall and CPU µs per call, and KB allocated per call. */
type Sample = { readonly wall: number; readonly cpu: number; readonly kbPerCall: number }
const targets: ReadonlyArray<TargetName> = ["effect3", "effect4", "plain"]

const load = async (target: "effect3" | "effect4"): Promise<{ E: EffectApi; suspend: Suspend }> => {
  // Cast through unknown: the two versions' types differ, the calls made here do not.
  const module = (target === "effect3" ? await import("effect/Effect") : await import(pathToFileURL(effect4).href)) as unknown as
    & EffectApi
    & { readonly async?: Suspend; readonly callback?: Suspend }
  const suspend = module.async ?? module.callback
  if (suspend === undefined) throw new Error(`${target}: neither Effect.async nor Effect.callback`)
  return { E: module, suspend }
}

/** A runner of `count` calls one after another, each started on the turn after the last one ended. */
const driver = async (target: TargetName) => {
  let resume: (answer: number) => void = () => {}
  let start: (i: number, done: (v: number) => void) => void
  if (target === "plain") {
    start = (i, done) => {
      let n = i
      for (let k = 0; k < 8; k++) n = ((x: number) => x + 1)(n)
      resume = (a) => {
        let v = (a + n) * 2
        for (let k = 0; k < 6; k++) v = ((x: number) => x - 1)(v)
        done(v)
      }
    }
  } else {
    const { E, suspend } = await load(target)
    start = (i, done) => {
      const call = E.suspend(() => {
        let steps = E.succeed(i)
        for (let k = 0; k < 8; k++) steps = E.flatMap(steps, (n) => E.succeed(n + 1))
        const answer = suspend((r) => {
          resume = (a) => r(E.succeed(a))
        })
        const guarded = E.uninterruptibleMask((restore) =>
          E.matchCauseEffect(restore(E.flatMap(steps, (n) => E.map(answer, (a) => a + n))), {
            onSuccess: (v) => E.succeed(v * 2),
            onFailure: (cause) => E.failCause(cause)
          })
        )
        let out = guarded
        for (let k = 0; k < 6; k++) out = E.map(out, (n) => n - 1)
        return E.flatMap(out, (v) => E.sync(() => done(v)))
      })
      E.runFork(call)
    }
  }
  return (count: number) =>
    new Promise<number>((resolve) => {
      let i = 0
      let sum = 0
      const next = () => {
        if (i === count) return resolve(sum)
        start(i++, (v) => {
          sum += v
          setImmediate(next)
        })
        // The answer, on the loop's next turn.
        setImmediate(() => resume(1))
      }
      next()
    })
}

/** In a child: best of five runs, and the scavenges over all of them. */
const child = async (target: TargetName) => {
  const run = await driver(target)
  const expected = (n: number) => n * (n - 1) + 12 * n
  const warm = await run(20_000)
  if (warm !== expected(20_000)) throw new Error(`${target}: ${warm} where ${expected(20_000)} was due`)
  let scavenges = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const gc = entry as PerformanceEntry & { readonly detail?: { readonly kind?: number } }
      if (gc.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++
    }
  })
  observer.observe({ entryTypes: ["gc"] })
  let wall = Infinity
  let cpu = Infinity
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    const sum = await run(calls)
    const us = Number(process.hrtime.bigint() - t0) / 1e3 / calls
    const c = process.cpuUsage(c0)
    if (sum !== expected(calls)) throw new Error(`${target}: ${sum} where ${expected(calls)} was due`)
    wall = Math.min(wall, us)
    cpu = Math.min(cpu, (c.user + c.system) / calls)
  }
  // The last collections' entries arrive on a later turn.
  await new Promise((r) => setTimeout(r, 100))
  observer.disconnect()
  const sample: Sample = { wall, cpu, kbPerCall: (scavenges * semiSpaceMb * 1024) / (5 * calls) }
  process.stdout.write(`${JSON.stringify(sample)}\n`)
}

const parent = () => {
  ensurePeers(root, effect4, (line) => process.stderr.write(`${line}\n`))
  const results = new Map<TargetName, Array<Sample>>(targets.map((t) => [t, []]))
  for (let round = 0; round < rounds; round++) {
    for (const target of rotate(targets, round)) {
      const r = spawnSync(process.execPath, [
        `--min-semi-space-size=${semiSpaceMb}`,
        `--max-semi-space-size=${semiSpaceMb}`,
        fileURLToPath(import.meta.url),
        "--child",
        target,
        "--calls",
        String(calls)
      ], { encoding: "utf8" })
      if (r.status !== 0) throw new Error(`${target} exited ${r.status}: ${r.stderr}`)
      results.get(target)!.push(JSON.parse(r.stdout) as Sample)
      process.stderr.write(`bench:runtime: round ${round + 1}/${rounds} ${target} done\n`)
    }
  }
  const of = (t: TargetName, k: keyof Sample) => median(results.get(t)!.map((r) => r[k]))
  const runtimeOf = (t: TargetName) => of(t, "cpu") - of("plain", "cpu")
  console.log(`\none call's shape (a fiber, ~40 operations, one suspension resumed on the next turn), ${calls} calls per run, ${rounds} rounds\n`)
  console.log("| target | wall µs per call | CPU µs per call | the runtime's CPU µs (over plain) | KB allocated per call |")
  console.log("|---|---:|---:|---:|---:|")
  for (const t of targets) {
    console.log(`| ${t} | ${fmt(of(t, "wall"))} | ${fmt(of(t, "cpu"))} | ${t === "plain" ? "–" : fmt(runtimeOf(t))} | ${fmt(of(t, "kbPerCall"), 1)} |`)
  }
  console.log(
    `\nEffect 4 ÷ Effect 3: the runtime's CPU ${fmt(runtimeOf("effect4") / runtimeOf("effect3"))}×, allocation ${
      fmt(of("effect4", "kbPerCall") / of("effect3", "kbPerCall"))
    }×`
  )
}

const childTarget = option("child")
if (childTarget === undefined) parent()
else if (childTarget === "effect3" || childTarget === "effect4" || childTarget === "plain") await child(childTarget)
else throw new Error(`--child takes effect3, effect4 or plain; got ${childTarget}`)
