/**
 * The bench's report: targets first (each with its goal from issue 11), then the tables behind
 * them. Rendered as Markdown; written into docs/performance.md between two markers, so the
 * hand-written parts of that file (how to read it, the profile) stay as they are.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { fmt, median } from "./stats.js"

/** One run of one scenario on one target. */
export interface Measurement {
  readonly rps: number
  readonly calls: number
  readonly p50: number
  readonly p99: number
  /** CPU time of the gateway process per call, ms. */
  readonly cpuPerCall?: number
  /** The highest RSS sampled during the run, MB. */
  readonly maxRss?: number
}

/** By target, then scenario: one measurement per round, in round order. */
export type Results = Record<string, Record<string, ReadonlyArray<Measurement>>>

/** The rounds in front of one upstream (issue 29's tables). */
export interface UpstreamResults {
  readonly kind: string
  readonly label: string
  readonly targets: ReadonlyArray<string>
  readonly results: Results
}

export interface Report {
  readonly startedAt: string
  readonly machine: { readonly cpu: string; readonly cores: number; readonly memoryGb: number; readonly node: string; readonly kernel: string }
  readonly loadAtStart: ReadonlyArray<number>
  readonly loadAtEnd: ReadonlyArray<number>
  readonly rounds: number
  readonly seconds: number
  readonly quick: boolean
  readonly scenarios: ReadonlyArray<{ readonly id: string; readonly label: string }>
  readonly targets: ReadonlyArray<string>
  /** By target, then scenario: one measurement per round, in round order. */
  readonly results: Results
  /** Every upstream's rounds, the first being the one `results` holds. */
  readonly byUpstream: ReadonlyArray<UpstreamResults>
  readonly idleRss: Record<string, number>
  /** A minute after the last of the fifty started (the idle reading), and 0.5 s after it. */
  readonly fiftyUpstreamsRss?: number
  readonly fiftyUpstreamsRssAtOnce?: number
  readonly soak?: {
    readonly calls: number
    readonly samples: ReadonlyArray<{ readonly calls: number; readonly rss: number }>
    /** The live heap after two full collections, before the first call of the long run and after its last. */
    readonly liveHeapMb?: readonly [number, number]
    /** RSS right after those collections, at both ends. */
    readonly rssAfterGcMb?: readonly [number, number]
    /** What grew most in number over `calls` more calls after those, by heap snapshots on either side (bench/lib/inspector.ts). */
    readonly grown?: {
      readonly calls: number
      readonly kinds: ReadonlyArray<{ readonly kind: string; readonly count: number; readonly bytes: number }>
    }
  }
  readonly cold: {
    readonly runs: number
    readonly medians: Record<string, number>
    readonly ratios: Record<string, number>
    readonly peakRss: Record<string, number>
  }
}

export const Begin = "<!-- bench:begin — written by `npm run bench`; edit outside these markers -->"
export const End = "<!-- bench:end -->"

const Us = "mcpx-fx"
const Peer = "mcp-proxy"

const runs = (r: { readonly results: Results }, target: string, scenario: string): ReadonlyArray<Measurement> => r.results[target]?.[scenario] ?? []

const med = (r: { readonly results: Results }, target: string, scenario: string, pick: (m: Measurement) => number | undefined): number | undefined => {
  const xs = runs(r, target, scenario).map(pick).filter((x): x is number => x !== undefined && Number.isFinite(x))
  return xs.length === 0 ? undefined : median(xs)
}

/** The median over rounds of a ratio taken within each round. */
const sameRound = (
  r: { readonly results: Results },
  a: { readonly target: string; readonly scenario: string },
  b: { readonly target: string; readonly scenario: string },
  pick: (m: Measurement) => number
): number | undefined => {
  const xs = runs(r, a.target, a.scenario)
  const ys = runs(r, b.target, b.scenario)
  const n = Math.min(xs.length, ys.length)
  if (n === 0) return undefined
  return median(Array.from({ length: n }, (_, i) => pick(xs[i]!) / pick(ys[i]!)))
}

const check = (value: number | undefined, ok: (v: number) => boolean): string =>
  value === undefined || !Number.isFinite(value) ? "not measured" : ok(value) ? "met" : "**not met**"

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const x = (v: number | undefined) => (v === undefined ? "–" : `${fmt(v)}×`)
const ms = (v: number | undefined, d = 3) => (v === undefined ? "–" : `${fmt(v, d)} ms`)
const mb = (v: number | undefined) => (v === undefined ? "–" : `${fmt(v, 0)} MB`)

export const renderReport = (r: Report): string => {
  const out: Array<string> = []
  const load = (l: ReadonlyArray<number>) => l.map((v) => v.toFixed(2)).join(" / ")
  out.push(Begin, "", "## Results", "")
  out.push(
    `Run ${r.startedAt}${r.quick ? " (quick mode: not a measurement to quote)" : ""}: ${r.rounds} round${r.rounds === 1 ? "" : "s"} of ` +
      `${r.seconds} s per run, targets in rotating order. Machine: ${r.machine.cpu}, ${r.machine.cores} cores, ` +
      `${r.machine.memoryGb.toFixed(0)} GB, ${r.machine.kernel}, Node ${r.machine.node}. Load average (1 / 5 / 15 min) ` +
      `at the start ${load(r.loadAtStart)}, at the end ${load(r.loadAtEnd)}.`,
    ""
  )

  const ratio = (scenario: string) => sameRound(r, { target: Us, scenario }, { target: Peer, scenario }, (m) => m.rps)
  const c16 = ratio("modern-c16")
  const c64 = ratio("modern-c64")
  const legacyVsModern = sameRound(r, { target: Us, scenario: "legacy-c16" }, { target: Us, scenario: "modern-c16" }, (m) => m.rps)
  const cpu16 = med(r, Us, "modern-c16", (m) => m.cpuPerCall)
  const addedC1 = (() => {
    const ours = runs(r, Us, "modern-c1")
    const direct = runs(r, "direct", "modern-c1")
    const n = Math.min(ours.length, direct.length)
    return n === 0 ? undefined : median(Array.from({ length: n }, (_, i) => ours[i]!.p50 - direct[i]!.p50))
  })()
  const tail64 = med(r, Us, "modern-c64", (m) => m.p99 / m.p50)
  const underLoad = med(r, Us, "modern-c64", (m) => m.maxRss)
  const idle = r.idleRss[`${Us} (idle)`]
  const cold = r.cold
  // One RSS sample swings by ±20 MB with the young generation's size at that instant, and their
  // trend by ~35 MB with old space's cycle, so the samples' means over the first and last fifths
  // (the one taken before any call left out) are shown beside them, and growth is judged after
  // full collections at both ends.
  const soakGrowth = (() => {
    const s = r.soak?.samples.map((x) => x.rss)
    if (s === undefined || s.length < 3) return undefined
    if (s.length < 11) return s[s.length - 1]! - s[1]!
    const fifth = Math.floor((s.length - 1) / 5)
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
    return mean(s.slice(-fifth)) - mean(s.slice(1, 1 + fifth))
  })()
  const heapGrowth = r.soak?.liveHeapMb === undefined ? undefined : r.soak.liveHeapMb[1] - r.soak.liveHeapMb[0]
  const rssGrowth = r.soak?.rssAfterGcMb === undefined ? undefined : r.soak.rssAfterGcMb[1] - r.soak.rssAfterGcMb[0]
  const oneShot = cold.peakRss["mcpx-fx tools (one server, warm era cache)"]

  out.push("### Targets (issue 11)", "")
  out.push(table(["target", "measured", "goal", ""], [
    ["modern tools/call c=16, mcpx-fx ÷ mcp-proxy calls/s", x(c16), "≥ 3×", check(c16, (v) => v >= 3)],
    ["modern tools/call c=64, mcpx-fx ÷ mcp-proxy calls/s", x(c64), "≥ 3×", check(c64, (v) => v >= 3)],
    ["legacy session c=16 ÷ modern c=16 (mcpx-fx)", x(legacyVsModern), "≥ 0.9×", check(legacyVsModern, (v) => v >= 0.9)],
    ["gateway CPU per call, modern c=16", ms(cpu16), "≤ 0.35 ms", check(cpu16, (v) => v <= 0.35)],
    ["warm c=1 p50 added over a direct stdio client", ms(addedC1), "≤ 0.3 ms", check(addedC1, (v) => v <= 0.3)],
    ["p99 ÷ p50 at modern c=64", x(tail64), "≤ 3×", check(tail64, (v) => v <= 3)],
    ["cold `--version` ÷ `node -e 0`", x(cold.ratios["mcpx-fx --version"]), "≤ 2×", check(cold.ratios["mcpx-fx --version"], (v) => v <= 2)],
    [
      "cold `tools` (one server, warm era cache) ÷ `node -e 0`",
      x(cold.ratios["mcpx-fx tools (one server, warm era cache)"]),
      "≤ 3×",
      check(cold.ratios["mcpx-fx tools (one server, warm era cache)"], (v) => v <= 3)
    ],
    [
      "cold `serve` to its first answer ÷ `node -e 0`",
      x(cold.ratios["mcpx-fx serve (first answer)"]),
      "≤ 3×",
      check(cold.ratios["mcpx-fx serve (first answer)"], (v) => v <= 3)
    ],
    ["peak RSS of a one-shot command (`tools`)", mb(oneShot), "≤ 70 MB", check(oneShot, (v) => v <= 70)],
    ["daemon RSS idle (one upstream started, a minute after its call)", mb(idle), "≤ 60 MB", check(idle, (v) => v <= 60)],
    ["daemon RSS under modern c=64", mb(underLoad), "≤ 100 MB", check(underLoad, (v) => v <= 100)],
    [
      "daemon RSS with 50 started upstreams, idle (a minute after the last start)",
      mb(r.fiftyUpstreamsRss),
      "≤ 100 MB",
      check(r.fiftyUpstreamsRss, (v) => v <= 100)
    ],
    [
      `daemon growth over ${
        r.soak === undefined ? "a long run (not run)" : `${r.soak.calls.toLocaleString("en")} calls`
      }, after two full collections at both ends: RSS; live heap`,
      rssGrowth === undefined || heapGrowth === undefined ? "–" : `${fmt(rssGrowth, 1)} MB; ${fmt(heapGrowth, 2)} MB`,
      "none (RSS ≤ 10 MB, live heap ≤ 1 MB)",
      check(rssGrowth === undefined || heapGrowth === undefined ? undefined : Math.max(rssGrowth - 10, heapGrowth - 1), (v) => v <= 0)
    ]
  ]))
  out.push("")

  const targets = r.targets
  out.push("### Throughput (calls/s, median of rounds)", "")
  out.push(table(
    ["scenario", ...targets, "mcpx-fx ÷ mcp-proxy (same round)"],
    r.scenarios.map((s) => [s.label, ...targets.map((t) => fmt(med(r, t, s.id, (m) => m.rps), 0)), x(ratio(s.id))])
  ))
  out.push("")
  out.push("### Latency (ms, p50 / p99, median of rounds)", "")
  out.push(table(
    ["scenario", ...targets],
    r.scenarios.map((s) => [
      s.label,
      ...targets.map((t) => `${fmt(med(r, t, s.id, (m) => m.p50), 3)} / ${fmt(med(r, t, s.id, (m) => m.p99), 3)}`)
    ])
  ))
  out.push("")
  const gateways = targets.filter((t) => t !== "direct")
  out.push("### CPU per call in the gateway process (ms, from /proc/<pid>/stat; the upstream not included)", "")
  out.push(table(
    ["scenario", ...gateways],
    r.scenarios.map((s) => [s.label, ...gateways.map((t) => fmt(med(r, t, s.id, (m) => m.cpuPerCall), 3))])
  ))
  out.push("")
  out.push("### Memory (RSS of the gateway process, MB)", "")
  const memRows: Array<Array<string>> = Object.entries(r.idleRss).map(([k, v]) => [k, fmt(v, 0)])
  for (const t of gateways) memRows.push([`${t}, highest during modern c=64`, fmt(med(r, t, "modern-c64", (m) => m.maxRss), 0)])
  if (r.fiftyUpstreamsRssAtOnce !== undefined) {
    memRows.push(["mcpx-fx with 50 started upstreams, 0.5 s after the last start", fmt(r.fiftyUpstreamsRssAtOnce, 0)])
  }
  if (r.fiftyUpstreamsRss !== undefined) memRows.push(["mcpx-fx with 50 started upstreams, idle (a minute after)", fmt(r.fiftyUpstreamsRss, 0)])
  out.push(table(["when", "RSS"], memRows))
  if (r.soak !== undefined) {
    // Every fifth sample is shown; the growth above is read from all of them.
    const shown = r.soak.samples.filter((_, i, all) => i % 5 === 0 || i === all.length - 1)
    out.push(
      "",
      `Over ${r.soak.calls.toLocaleString("en")} modern calls at c=16 (mcpx-fx), RSS sampled ${r.soak.samples.length - 1} times (every fifth shown): ` +
        shown.map((s) => `${(s.calls / 1000).toFixed(0)}k ${s.rss.toFixed(0)} MB`).join(", ") +
        `; the means of the first and last fifths of the samples differ by ${fmt(soakGrowth, 1)} MB, ` +
        "which is where old space and the young generation stood in their cycles (the growth above is read after full collections)."
    )
    const heap = r.soak.liveHeapMb
    const rss = r.soak.rssAfterGcMb
    if (heap !== undefined) {
      out.push(
        "",
        `The live heap after two full collections: ${fmt(heap[0], 2)} MB before the first of those calls, ${fmt(heap[1], 2)} MB after the last` +
          (rss === undefined ? "." : `; RSS right after those collections ${fmt(rss[0], 0)} MB and ${fmt(rss[1], 0)} MB.`)
      )
    }
    const g = r.soak.grown
    if (g !== undefined) {
      const kinds = g.kinds.map((k) => `${k.kind} +${k.count.toLocaleString("en")} (${fmt(k.bytes / 1024, 1)} KB)`)
      out.push(
        "",
        `Heap snapshots on either side of ${g.calls.toLocaleString("en")} more calls: ` +
          (kinds.length === 0 ? "no kind of object grew in number." : `what grew most in number, ${kinds.join(", ")}.`)
      )
    }
  }
  out.push("")
  for (const u of r.byUpstream) out.push(renderAgainstMinimal(u), "")
  const modernPath = renderModernPath(r.byUpstream)
  if (modernPath !== undefined) out.push(modernPath, "")
  out.push(renderCold(cold))
  out.push("", End, "")
  return out.join("\n")
}

const Minimal = "minimal"

/**
 * Issue 29's "a modern upstream path as fast as a legacy one": CPU per call in front of the dual
 * upstream over that in front of the legacy one, for mcpx-fx and for the minimal gateway, which
 * opens either as a legacy session and so shows what the fixture's own answers cost. The two
 * upstreams' rounds run one after the other, so these ratios span the machine's drift between them.
 */
const renderModernPath = (byUpstream: ReadonlyArray<UpstreamResults>): string | undefined => {
  const of = (kind: string) => byUpstream.find((u) => u.kind === kind)
  const [legacy, dual] = [of("legacy"), of("dual")]
  if (legacy === undefined || dual === undefined) return undefined
  const cpu = (u: UpstreamResults, t: string) => med(u, t, "modern-c16", (m) => m.cpuPerCall)
  const over = (t: string) => {
    const [d, l] = [cpu(dual, t), cpu(legacy, t)]
    return d === undefined || l === undefined ? undefined : d / l
  }
  return `A stdio upstream that speaks 2026-07-28 against a legacy-only one, CPU per call at modern c=16: mcpx-fx ${
    x(over(Us))
  } (which talks 2026-07-28 to it, every request carrying the version, capabilities and client in \`_meta\`), the minimal gateway ${
    x(over(Minimal))
  } (a legacy session to both).`
}

/**
 * Issue 29's table for one upstream: the floor, the minimal gateway, mcpx-fx and mcp-proxy, then
 * mcpx-fx ÷ minimal (each ratio the median of same-round ratios) against its goal.
 */
export const renderAgainstMinimal = (u: UpstreamResults): string => {
  const rps = (t: string, s: string) => fmt(med(u, t, s, (m) => m.rps), 0)
  const rows = ["floor", Minimal, Us, Peer].map((t) => {
    const measured = u.results[t] !== undefined
    const note = t === "floor" && !u.targets.includes("floor") ? " (no upstream; measured once, with the first)" : ""
    if (!measured) return [t, t === Peer && u.kind === "http" ? "– (fronts stdio servers only)" : "not run", "–", "–", "–"]
    return [
      `${t}${note}`,
      rps(t, "modern-c16"),
      rps(t, "modern-c64"),
      fmt(med(u, t, "modern-c16", (m) => m.cpuPerCall), 3),
      fmt(med(u, t, "modern-c1", (m) => m.p50), 3)
    ]
  })
  const ratio = (s: string, pick: (m: Measurement) => number) => sameRound(u, { target: Us, scenario: s }, { target: Minimal, scenario: s }, pick)
  const c16 = ratio("modern-c16", (m) => m.rps)
  const c64 = ratio("modern-c64", (m) => m.rps)
  const cpu = ratio("modern-c16", (m) => m.cpuPerCall ?? NaN)
  const p50 = ratio("modern-c1", (m) => m.p50)
  rows.push(
    ["**mcpx-fx ÷ minimal** (same round)", x(c16), x(c64), x(cpu), x(p50)],
    ["goal", "≥ 0.5×", "≥ 0.5×", "≤ 2×", "≤ 1.5×"],
    [
      "",
      check(c16, (v) => v >= 0.5),
      check(c64, (v) => v >= 0.5),
      check(cpu, (v) => v <= 2),
      check(p50, (v) => v <= 1.5)
    ]
  )
  return [
    `### Against the minimal gateway (issue 29): ${u.label}`,
    "",
    table(["target", "modern c=16 calls/s", "modern c=64 calls/s", "gateway CPU per call at c=16 (ms)", "c=1 p50 (ms)"], rows)
  ].join("\n")
}

/** The cold-start table alone (also what `--cold-only` prints). */
export const renderCold = (cold: Report["cold"]): string =>
  [
    `### Cold start (${cold.runs} runs each, interleaved; ratio = median of each run ÷ the \`node -e 0\` run next to it)`,
    "",
    table(
      ["command", "median", "÷ node -e 0", "peak RSS"],
      Object.keys(cold.medians).map((k) => [
        k,
        ms(cold.medians[k], 1),
        k === "node -e 0" ? "1×" : x(cold.ratios[k]),
        mb(cold.peakRss[k])
      ])
    )
  ].join("\n")

/** Puts the rendered section into the file between the markers, or appends it. */
export const writeReport = (file: string, section: string): void => {
  const current = existsSync(file) ? readFileSync(file, "utf8") : "# Performance\n\n"
  const begin = current.indexOf(Begin)
  const end = current.indexOf(End)
  const next = begin >= 0 && end > begin
    ? current.slice(0, begin) + section.trimEnd() + current.slice(end + End.length)
    : `${current.trimEnd()}\n\n${section}`
  writeFileSync(file, next.endsWith("\n") ? next : `${next}\n`)
}
