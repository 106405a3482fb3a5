/**
 * The process facts of `ProcessTable.Table` read from the system's `ps`, where there is no `/proc`
 * (macOS, the BSDs). Every field comes from `ps -o` keywords that Apple's, FreeBSD's and procps'
 * `ps` all have: `pid`, `pgid`, `stat` (a zombie's starts with `Z`), `lstart` (when the process
 * started, to the second) and `args`; and the environment is the one `ps` appends to `args` with
 * its environment flag (`-E` on macOS, `e` with procps, `-e` on the BSDs).
 *
 * No npm package is used: the cross-platform ones (ps-list, pidtree, pidusage, find-process,
 * tree-kill) all run this same `ps`, and none asks it for the process group or the environment,
 * which are what tells a process mcpx-fx started from a stranger. See `ProcessGroups` for how the
 * facts are used.
 *
 * Start times are seconds since the epoch (`ps` runs with `TZ=UTC`, so the text does not depend
 * on the zone). A second is coarse, but a pid is given again only after the pid space wraps
 * around (99 999 on macOS, sequential), so one pid with one start second is one process. The boot
 * is told by the start of pid 1 (launchd, init).
 *
 * Every call runs `ps` synchronously (a few milliseconds): these facts are asked for when an
 * upstream starts and when a daemon reaps what a crashed one left, never in a loop that serves
 * requests. Every function answers `undefined`, `false` or an empty list when `ps` cannot answer.
 */
import { execFileSync } from "node:child_process"
import type { ProcStat, Table } from "./ProcessTable.js"

const psEnvironment = { ...process.env, LC_ALL: "C", LANG: "C", TZ: "UTC" }

/** `ps`'s standard output, or undefined when it failed (no such process: exit status 1). */
const run = (args: ReadonlyArray<string>): string | undefined => {
  try {
    return execFileSync("ps", args, {
      encoding: "utf8",
      env: psEnvironment,
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
      maxBuffer: 64 * 1024 * 1024
    })
  } catch {
    return undefined
  }
}

const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

/** `lstart` in the C locale and UTC (`Fri Dec  4 16:25:48 2026`) as epoch seconds. */
const lstartPattern = /^\w{3} +(\w{3}) +(\d{1,2}) +(\d{2}):(\d{2}):(\d{2}) +(\d{4})$/
export const parseLstart = (text: string): string | undefined => {
  const m = lstartPattern.exec(text.trim())
  if (m === null) return undefined
  const month = months.indexOf(m[1] ?? "")
  if (month < 0) return undefined
  const ms = Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]))
  return Number.isFinite(ms) ? String(ms / 1000) : undefined
}

// pid, pgid, stat, then the five words of lstart.
const linePattern = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+\s+\S+\s+\S+\s+\S+\s+\S+)\s*$/

const parseLine = (line: string): ProcStat | undefined => {
  const m = linePattern.exec(line)
  if (m === null) return undefined
  const start = parseLstart(m[4] ?? "")
  if (start === undefined) return undefined
  // No session: macOS's `sess` is a kernel address, not an id.
  return { pid: Number(m[1]), state: (m[3] ?? "?").charAt(0), pgrp: Number(m[2]), start }
}

const statFields = "pid=,pgid=,stat=,lstart="

let works: boolean | undefined

/** Whether `ps` runs here and answers in the expected form (asked once). */
export const available = (): boolean => {
  works ??= stat(process.pid) !== undefined
  return works
}

export const stat = (pid: number): ProcStat | undefined => {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
  const out = run(["-o", statFields, "-p", String(pid)])
  const s = out === undefined ? undefined : parseLine(out.split("\n")[0] ?? "")
  return s?.pid === pid ? s : undefined
}

export const startTime = (pid: number): string | undefined => {
  const s = stat(pid)
  return s === undefined || s.state === "Z" ? undefined : s.start
}

export const bootId = (): string | undefined => {
  const s = stat(1)
  return s === undefined ? undefined : `pid1@${s.start}`
}

export const membersOf = (pgid: number): ReadonlyArray<ProcStat> => {
  const out = run(["-A", "-o", statFields])
  if (out === undefined) return []
  const members: Array<ProcStat> = []
  for (const line of out.split("\n")) {
    const s = parseLine(line)
    if (s !== undefined && s.pgrp === pgid && s.state !== "Z") members.push(s)
  }
  return members
}

/** The flag that makes this platform's `ps` append each process's environment to its `args`. */
const environmentFlag = process.platform === "darwin" ? "-E" : process.platform === "linux" ? "e" : "-e"

/**
 * Whether `entry` is one of the words `ps` shows for `pid` with its environment. The token in it is
 * random and kept in an owner-only file, so only a process given it (ours) shows it. Where the
 * environment cannot be read (another user's process; on macOS a restricted one), it is not found.
 */
export const environHas = (pid: number, entry: string): boolean => {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  const out = run([environmentFlag, "-ww", "-o", "args=", "-p", String(pid)])
  return out !== undefined && out.split(/\s+/).includes(entry)
}

export const commandLine = (pid: number): string | undefined => {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
  const out = run(["-ww", "-o", "args=", "-p", String(pid)])
  return out === undefined ? undefined : out.trim()
}

/** The facts `ps` gives, for `ProcessGroups` where `/proc` is missing (or for tests, anywhere). */
export const ps: Table = { name: "ps", available, stat, startTime, bootId, membersOf, environHas, commandLine }
