/**
 * How large V8 lets its young generation grow, set from inside the process (bin.ts runs this
 * before the CLI's bundle is loaded).
 *
 * By default Node grows each of the young generation's two semi-spaces from 1 MB to 16 MB as soon
 * as objects survive scavenges. That buys a short command nothing but ~10 MB of peak RSS, and a
 * daemon under load nothing over 8 MB: measured with `npm run bench:memory`, an 8 MB cap serves as
 * many calls per second with ~17 MB less peak RSS and a lower p99 (fewer objects copied per
 * scavenge). The size limit itself (`--max-semi-space-size`) is read only when the heap is set up,
 * so `v8.setFlagsFromString` cannot change it in a running process; the growth factor is read at
 * every growth, so that is the lever used here:
 *
 * - a one-shot command keeps the factor at 1, so the young generation never grows;
 * - `daemon` and `serve` watch the collector and let it grow, one doubling at a time, while it is
 *   under the cap. A step lands on the cap at most, and V8 shrinks it again when the process idles.
 *
 * A young generation size given on Node's own command line or in NODE_OPTIONS is the user's
 * choice, and this leaves the process alone. On a Node whose V8 ignores the flag, nothing changes.
 *
 * V8 stamps a code cache with a hash of every flag's value and rejects a cache whose stamp differs
 * from the running process's, so the factor must be back at its start value whenever bin.ts writes
 * the cache; see `asAtStart`.
 */
import { PerformanceObserver } from "node:perf_hooks"
import * as v8 from "node:v8"

/** Each semi-space's cap, in MB, for the long-running commands. */
export const longRunningCapMb = 8

const MB = 1024 * 1024

/** The current size of one semi-space, in MB (V8 reports both semi-spaces together). */
export const semiSpaceMb = (): number => {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")
  return space === undefined ? 0 : space.space_size / 2 / MB
}

/** Whether the young generation's size was given to Node on its command line or in NODE_OPTIONS. */
const chosenByUser = (): boolean =>
  [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((flag) => /semi[-_]space/.test(flag))

/** The factor as this module last set it; 0 until it does. */
let factor = 0

const setFactor = (next: number): void => {
  if (next === factor) return
  factor = next
  v8.setFlagsFromString(`--semi-space-growth-factor=${next}`)
}

/**
 * Sizes the young generation for the command about to run: held where it is for a one-shot
 * command, allowed up to `capMb` per semi-space for a long-running one.
 */
export const sizeYoungGeneration = (longRunning: boolean, capMb = longRunningCapMb): void => {
  if (chosenByUser()) return
  // Held during the synchronous start in either case: the collector's observers are only told
  // once the event loop turns, so a factor above 1 now could overshoot the cap before any check.
  setFactor(1)
  if (!longRunning) return
  const adjust = (): void => {
    const current = semiSpaceMb()
    setFactor(current > 0 && current < capMb ? Math.min(2, Math.floor(capMb / current)) : 1)
  }
  new PerformanceObserver(adjust).observe({ entryTypes: ["gc"] })
}

/**
 * Puts the factor back to what it was when the CLI's bundle was loaded, so that a code cache made
 * now is accepted by the next start. Nothing grows it again: this is for the process's exit.
 */
export const asAtStart = (): void => {
  if (factor !== 0) setFactor(1)
}

/** Whether the command line runs a command that serves until stopped (any word `daemon` or `serve`). */
export const isLongRunning = (args: ReadonlyArray<string>): boolean =>
  args.some((word) => word === "daemon" || word === "serve")
