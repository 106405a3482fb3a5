/**
 * `npm run bench:latency`: where a c=1 call's time goes inside the gateway, step by step, for
 * mcpx-fx and the minimal gateway (bench/minimal-gateway.ts) in front of the same stdio upstream.
 * At c=1 each call wakes the gateway twice (the host's request, the upstream's answer), and its
 * p50 is the sum of what each process does in turn; the CPU profile cannot split that by step (its
 * sampler cannot keep up at the resolution a call needs), but the system calls can: `perf trace`
 * on the gateway's main thread timestamps the read of the request, the write of the upstream's
 * line, the read of its answer and the write of the response, so the time between them is the
 * gateway's own work on the call's critical path, measured on every call.
 *
 *   options: --seconds S (traced per target and round, default 4) --rounds N (default 2, targets alternate)
 *            --upstream legacy|dual (a stdio upstream: its pipe's reads and writes mark the steps; default legacy)
 *            --legacy (a legacy session instead of modern calls)
 *
 * Needs `perf` (Debian: `apt-get install linux-perf`) and the right to trace (root, or a low
 * kernel.perf_event_paranoid). The tracer adds a few microseconds to every system call of both
 * targets alike; read the differences, not the absolute figures.
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { flag, option } from "./lib/args.js"
import { runLoad } from "./lib/load.js"
import { fmt, median } from "./lib/stats.js"
import { pathsFrom, startMcpxFx, startMinimal, type Target } from "./lib/targets.js"
import { parseUpstreams, startUpstream } from "./lib/upstreams.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const seconds = Number(option("seconds") ?? 4) || 4
const rounds = Number(option("rounds") ?? 2) || 2
const legacy = flag("legacy")
const upstreamKind = parseUpstreams(option("upstream") ?? "legacy")[0]!
if (upstreamKind !== "legacy" && upstreamKind !== "dual") {
  throw new Error(`--upstream takes legacy or dual here (a stdio upstream marks the steps); got ${upstreamKind}`)
}

/** One system call of the traced thread: when it began and ended (µs from the trace's start), its fd and result. */
interface Syscall {
  readonly name: string
  readonly start: number
  readonly end: number
  readonly fd: number | undefined
  readonly result: number
}

// `     7.840 ( 0.013 ms): read(fd: 24, buf: 0xf989a90, count: 65536)      = 542`
const line = /^\s*([\d.]+) \(\s*([\d.]+) ms\): (\w+)\((.*)\)\s+= (-?\d+)/

const parseTrace = (text: string): ReadonlyArray<Syscall> =>
  text.split("\n").flatMap((l) => {
    const m = line.exec(l)
    if (m === null) return []
    const start = Number(m[1]) * 1000
    const fd = /^fd: (\d+)/.exec(m[4]!)
    return [{ name: m[3]!, start, end: start + Number(m[2]) * 1000, fd: fd === null ? undefined : Number(fd[1]), result: Number(m[5]) }]
  })

/** The steps of a call, in the order they come at c=1; the gateway's own work first, then the others' turns. */
const Steps = [
  ["request read → upstream line written", "request", "upstream"],
  ["upstream answer read → response written", "answer", "response"],
  ["response written → next poll of the loop", "response", "poll"],
  ["upstream line written → its answer read (the upstream's turn)", "upstream", "answer"],
  ["response written → next request read (the host's turn)", "response", "request"]
] as const

type Mark = "request" | "upstream" | "answer" | "response" | "poll"
type Step = (typeof Steps)[number][0]

/**
 * Each step's durations: from the end of the system call that begins it to the start of the one
 * that ends it. The host's socket is the fd the responses are written to; a read of any other fd
 * is the upstream's answer, a write to any other fd the upstream's line. A poll of the loop inside
 * a step (a hop through the event loop, a wait for the other process) is part of that step.
 */
const stepsOf = (calls: ReadonlyArray<Syscall>): Record<Step, Array<number>> => {
  const counts = new Map<number, number>()
  for (const c of calls) if (c.name === "writev" && c.fd !== undefined) counts.set(c.fd, (counts.get(c.fd) ?? 0) + 1)
  const socket = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]
  const markOf = (c: Syscall): Mark | undefined => {
    if (c.name === "epoll_pwait" || c.name === "epoll_wait") return "poll"
    if (c.fd === undefined || c.result <= 0) return undefined
    if (c.name === "read") return c.fd === socket ? "request" : "answer"
    if (c.name === "write" || c.name === "writev") return c.fd === socket ? "response" : "upstream"
    return undefined
  }
  const out = Object.fromEntries(Steps.map(([label]) => [label, [] as Array<number>])) as Record<Step, Array<number>>
  let last: { readonly mark: Mark; readonly end: number } | undefined
  let polled = false
  for (const c of calls) {
    const mark = markOf(c)
    if (mark === undefined || last === undefined) {
      if (mark !== undefined && mark !== "poll") last = { mark, end: c.end }
      continue
    }
    // Only the first poll after a response ends a step; every other poll lies inside one.
    if (mark === "poll" && (last.mark !== "response" || polled)) continue
    const step = Steps.find(([, from, to]) => from === last?.mark && to === mark)
    if (step !== undefined) out[step[0]].push(c.start - last.end)
    if (mark === "poll") polled = true
    else {
      last = { mark, end: c.end }
      polled = false
    }
  }
  return out
}

/** Traces `target`'s main thread while c=1 calls run; answers each step's durations and the calls' p50. */
const traced = async (target: Target): Promise<{ readonly steps: Record<Step, Array<number>>; readonly p50: number }> => {
  const shape = legacy ? await target.legacy() : target.modern
  await runLoad(shape, { concurrency: 1, durationMs: 1500 })
  const dir = mkdtempSync(join(tmpdir(), "mcpx-latency-"))
  const file = join(dir, "trace.txt")
  try {
    const perf = spawn("perf", ["trace", "--tid", String(target.pid), "-e", "read,write,writev,epoll_pwait,epoll_wait", "-o", file], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    perf.stderr.on("data", (c: Buffer) => void (stderr += c.toString()))
    const exited = new Promise<void>((resolve) => perf.once("close", () => resolve()))
    let r: Awaited<ReturnType<typeof runLoad>>
    try {
      // perf says nothing once it is attached; a short run before the measured one lets it settle.
      await runLoad(shape, { concurrency: 1, durationMs: 300 })
      r = await runLoad(shape, { concurrency: 1, durationMs: seconds * 1000 })
    } finally {
      // Stopped however the load ended: a tracer left attached outlives the bench.
      if (perf.exitCode === null && perf.signalCode === null) perf.kill("SIGINT")
      await exited
    }
    const calls = existsSync(file) ? parseTrace(readFileSync(file, "utf8")) : []
    if (calls.length === 0) throw new Error(`perf trace recorded nothing (exit ${String(perf.exitCode ?? perf.signalCode)}): ${stderr.trim()}`)
    return { steps: stepsOf(calls), p50: median(Array.from(r.latencies)) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const main = async () => {
  const probe = spawnSync("perf", ["--version"], { encoding: "utf8" })
  if (probe.status !== 0) throw new Error("bench:latency needs perf (Debian: apt-get install linux-perf)")
  const paths = pathsFrom(root)
  const upstream = await startUpstream(paths, upstreamKind)
  const results = new Map<string, Array<{ readonly steps: Record<Step, Array<number>>; readonly p50: number }>>()
  try {
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ["minimal", "mcpx-fx"] : ["mcpx-fx", "minimal"]
      for (const name of order) {
        const target = name === "minimal" ? await startMinimal(paths, upstream.spec) : await startMcpxFx(paths, ["bench"], [], upstream.spec)
        try {
          const r = await traced(target)
          results.set(name, [...(results.get(name) ?? []), r])
        } finally {
          await target.stop()
        }
      }
    }
  } finally {
    await upstream.stop()
  }
  // Each round's median, then the median over rounds: a round is one process, and processes differ.
  const stepMedian = (name: string, step: Step) => median((results.get(name) ?? []).map((r) => median(r.steps[step])))
  const count = (name: string, step: Step) => (results.get(name) ?? []).reduce((n, r) => n + r.steps[step].length, 0)
  const p50 = (name: string) => median((results.get(name) ?? []).map((r) => r.p50 * 1000))
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
  const rows = [
    `c=1 ${
      legacy ? "legacy-session" : "modern"
    } tools/call, ${upstreamKind} stdio upstream, ${rounds} rounds of ${seconds} s per target under perf trace (load ${load})`,
    "",
    "| step (median µs, traced) | minimal | mcpx-fx | added |",
    "|---|---:|---:|---:|",
    ...Steps.map(([label]) => {
      const a = stepMedian("minimal", label)
      const b = stepMedian("mcpx-fx", label)
      return `| ${label} | ${fmt(a, 0)} | ${fmt(b, 0)} | ${b >= a ? "+" : ""}${fmt(b - a, 0)} |`
    }),
    `| c=1 p50 of the traced calls | ${fmt(p50("minimal"), 0)} | ${fmt(p50("mcpx-fx"), 0)} | +${fmt(p50("mcpx-fx") - p50("minimal"), 0)} |`,
    "",
    `calls traced: minimal ${count("minimal", Steps[0][0])}, mcpx-fx ${count("mcpx-fx", Steps[0][0])}`
  ]
  process.stdout.write(`${rows.join("\n")}\n`)
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`latency failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
    process.exit(1)
  }
)
