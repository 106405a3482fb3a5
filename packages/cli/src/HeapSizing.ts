/**
 * How far V8 lets the heap grow, set from inside the process: bin.ts runs this before the CLI's
 * bundle is loaded. Node's own limits suit a program that allocates a lot and keeps much of it;
 * a gateway keeps little (its live heap is ~15 MB), so by default its RSS is mostly room it does
 * not need. Measured with `npm run bench:memory` (docs/performance.md):
 *
 * - **Young generation.** Node grows each of its two semi-spaces from under 1 MB to 16 MB once
 *   objects survive scavenges. For a one-shot command that is ~10 MB of peak RSS for nothing; for
 *   the daemon under load, 8 MB serves as many calls with less RSS and a lower p99. The size limit
 *   (`--max-semi-space-size`) is read only when the heap is set up, so `v8.setFlagsFromString`
 *   cannot change it in a running process; the growth factor is read at every growth, and that
 *   is the lever here. A one-shot command keeps the factor at 1, so the young generation never
 *   grows. `daemon` and `serve` watch the collector: at the cap the factor is 1, and below it (V8
 *   shrinks the young generation when the process idles) a step lands on the cap at most. The
 *   daemon starts held and watches only once it is listening (`serving`): its start's survivors
 *   grew the young generation to the cap, and V8's memory reducer, which had already run during
 *   that start, did not shrink it back, so an idle daemon kept 16 MB it never used.
 * - **Old generation.** After each mark-compact V8 lets old space grow to up to 4× what survived
 *   before the next one. Under load the calls in flight are promoted and die there, so old space
 *   swings far above the live heap. A fixed 150% growth (2.5×) takes 30–36 MB off the daemon's
 *   highest RSS at c=64, with calls/s and p99 within the noise between runs. This flag is read at
 *   every limit computation, and it is set once, before the bundle is compiled.
 * - **Pretenuring.** V8 allocates an object literal straight in old space once most of those made
 *   at its site have outlived a scavenge. A call's objects die young, but one survival feeds the
 *   next: an object allocated old and dead there still points at the call's young objects, so they
 *   outlive the scavenge, so their own sites are judged long-lived too. `serve` fell into that loop
 *   under load and stayed in it: 6.6 KB of every call promoted at c=1 and 13 KB at c=16, a
 *   scavenge taking 2.5–3 ms and a fifth of the time (`npm run bench:gc -- --stdio-host`). Without
 *   pretenuring, 0.5 KB and 3.5 KB, and 1.3× the calls/s at c=16. `daemon` and `serve` run without
 *   it; a one-shot command, whose objects mostly live until it exits, keeps it.
 *
 * A size given on Node's own command line or in NODE_OPTIONS is the user's choice, and that part
 * is left alone. On a Node whose V8 ignores a flag, nothing changes.
 *
 * V8 stamps a code cache with a hash of every flag's value and rejects a cache whose stamp differs
 * from the running process's. So the flags must be at their start values whenever bin.ts writes
 * the cache; see `asAtStart`.
 */
import { PerformanceObserver } from "node:perf_hooks"
import * as v8 from "node:v8"

/** Each semi-space's cap, in MB, for the long-running commands. */
export const longRunningCapMb = 8

/** How much old space may grow past what survived the last mark-compact, in percent. */
export const oldGenerationGrowthPercent = 150

const MB = 1024 * 1024

/** The current size of one semi-space, in MB (V8 reports both semi-spaces together). */
const semiSpaceMb = (): number => {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")
  return space === undefined ? 0 : space.space_size / 2 / MB
}

/** Whether the user gave Node a flag matching `pattern`, on its command line or in NODE_OPTIONS. */
const chosenByUser = (pattern: RegExp): boolean => [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((flag) => pattern.test(flag))

/** The growth factor as this module last set it; 0 until it does. */
let factor = 0
/** The factor the CLI's bundle was loaded with. */
let startFactor = 1

const setFactor = (next: number): void => {
  if (next === factor) return
  factor = next
  v8.setFlagsFromString(`--semi-space-growth-factor=${next}`)
}

/** What the command line runs, as far as the heap is concerned. */
export type CommandKind = "one-shot" | "daemon" | "serve"

const servesUntilStopped = (word: string): word is "daemon" | "serve" => word === "daemon" || word === "serve"

/** The first word `daemon` or `serve` names the command; without one, it runs and exits. */
export const commandKind = (args: ReadonlyArray<string>): CommandKind => args.find(servesUntilStopped) ?? "one-shot"

/**
 * Sizes the heap for the command about to run: the young generation held where it is for a
 * one-shot command and for the daemon's start, allowed up to `capMb` per semi-space for `serve`
 * (and for the daemon once it serves); old space's growth fixed at `oldGenerationGrowthPercent`.
 */
export const sizeHeap = (kind: CommandKind, capMb = longRunningCapMb): void => {
  if (!chosenByUser(/heap[-_]growing[-_]percent/)) {
    v8.setFlagsFromString(`--heap-growing-percent=${oldGenerationGrowthPercent}`)
  }
  if (kind !== "one-shot" && !chosenByUser(/allocation[-_]site[-_]pretenuring/)) {
    v8.setFlagsFromString("--no-allocation-site-pretenuring")
  }
  if (chosenByUser(/semi[-_]space/)) return
  if (kind === "one-shot") return setFactor(1)
  // The daemon's start is held at 1 until it is listening (`serving`). `serve` gets one growth
  // straight to the cap instead: scavenging at 8 MB rather than at 1, 2, 4 MB, it answers its host's first request in 2.65x `node -e 0` against 2.98x held. Its
  // start may grow the young generation once more, to 16 MB, until V8 shrinks it when idle.
  startFactor = kind === "daemon" ? 1 : Math.max(1, Math.floor(capMb / Math.max(semiSpaceMb(), 0.5)))
  setFactor(startFactor)
  if (kind === "serve") watch(capMb)
}

const watch = (capMb: number): void => {
  const adjust = (): void => {
    const current = semiSpaceMb()
    setFactor(current > 0 && current < capMb ? Math.min(2, Math.floor(capMb / current)) : 1)
  }
  new PerformanceObserver(adjust).observe({ entryTypes: ["gc"] })
}

/**
 * For the daemon, once it is listening: from now on the young generation may grow with the load,
 * up to `capMb` per semi-space. The CLI's bundle calls this; its copy of this module shares only
 * V8's flags with bin.ts's, which is why `asAtStart` sets the factor whatever it last knew.
 */
export const serving = (capMb = longRunningCapMb): void => {
  if (!chosenByUser(/semi[-_]space/)) watch(capMb)
}

/**
 * Puts the young generation's growth factor back to what it was when the CLI's bundle was
 * loaded, so that a code cache made now is accepted by the next start. This is for the process's
 * exit: the young generation may grow once more, past the cap.
 */
export const asAtStart = (): void => {
  if (factor === 0) return
  factor = startFactor
  v8.setFlagsFromString(`--semi-space-growth-factor=${startFactor}`)
}
