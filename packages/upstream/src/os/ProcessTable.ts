/**
 * What Linux's `/proc` says about other processes: when one started, its process group, whether it
 * carries an environment entry, its command line. Enough to tell a process mcpx-fx started from a
 * stranger that was given the same pid later, which a pid alone cannot.
 *
 * Every function answers `undefined` or an empty list where `/proc` is missing (macOS) or the
 * process is gone or not readable; callers then decide nothing about it. Reads are synchronous:
 * procfs files are generated in memory and never block, so these are cheap enough to poll.
 *
 * The same facts where there is no `/proc` come from `ps` (`PsTable.ts`), at the cost of a
 * process per question; both are a `Table`, which `ProcessGroups` takes. On Linux `/proc` is
 * the better source: start times in clock ticks rather than seconds, a real boot id, the
 * environment of any process of the user, and no process started to ask.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"

/** Whether `/proc` can be read here at all. */
export const available = (): boolean => existsSync("/proc/self/stat")

/** One line of `/proc/<pid>/stat` (or of `ps`), the fields this module uses. */
export interface ProcStat {
  readonly pid: number
  /** `R`, `S`, `Z`, …; a zombie (`Z`) runs nothing. */
  readonly state: string
  readonly pgrp: number
  /** Absent from `ps`, which has no portable session column. */
  readonly session?: number
  /**
   * When the process started: clock ticks after boot from `/proc`, epoch seconds from `ps`. With
   * the boot id, unique over the machine's life; only compared with what the same source said.
   */
  readonly start: string
}

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

/** The fields of `/proc/<pid>/stat`, or undefined when the process is gone. */
export const stat = (pid: number): ProcStat | undefined => {
  const text = read(`/proc/${pid}/stat`)
  if (text === undefined) return undefined
  // The command name (field 2) is in parentheses and may hold anything, parentheses included.
  const close = text.lastIndexOf(")")
  if (close < 0) return undefined
  const fields = text.slice(close + 2).split(" ")
  // fields[0] is field 3 (state); pgrp is 5, session 6, starttime 22.
  const state = fields[0]
  const pgrp = Number(fields[2])
  const session = Number(fields[3])
  const start = fields[19]
  if (state === undefined || start === undefined || !Number.isInteger(pgrp) || !Number.isInteger(session)) return undefined
  return { pid, state, pgrp, session, start }
}

/** When `pid` started (clock ticks after boot), or undefined when it is gone or `/proc` is missing. */
export const startTime = (pid: number): string | undefined => {
  const s = stat(pid)
  return s === undefined || s.state === "Z" ? undefined : s.start
}

/** This boot's id: start times count from boot, so they only compare within one. */
export const bootId = (): string | undefined => read("/proc/sys/kernel/random/boot_id")?.trim()

/** Every living (not zombie) process in process group `pgid`. */
export const membersOf = (pgid: number): ReadonlyArray<ProcStat> => {
  let entries: ReadonlyArray<string>
  try {
    entries = readdirSync("/proc")
  } catch {
    return []
  }
  const members: Array<ProcStat> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const s = stat(Number(entry))
    if (s !== undefined && s.pgrp === pgid && s.state !== "Z") members.push(s)
  }
  return members
}

/** Whether `pid`'s environment holds exactly `entry` (`NAME=value`); false when it cannot be read. */
export const environHas = (pid: number, entry: string): boolean => {
  const text = read(`/proc/${pid}/environ`)
  return text !== undefined && text.split("\0").includes(entry)
}

/** The command line of `pid`, its arguments joined by spaces, or undefined when it is gone. */
export const commandLine = (pid: number): string | undefined => {
  const text = read(`/proc/${pid}/cmdline`)
  return text === undefined ? undefined : text.split("\0").filter((a) => a.length > 0).join(" ")
}

/** Whether any process of group `pgid` is left (signal 0 checks without sending anything). */
export const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Where process facts come from: `/proc` (`procfs` here) or `ps` (`PsTable.ps`). */
export interface Table {
  readonly name: string
  /** Whether this source can be read here at all. */
  readonly available: () => boolean
  /** The process's state, group and start time, or undefined when it is gone. */
  readonly stat: (pid: number) => ProcStat | undefined
  /** When `pid` started, or undefined when it is gone or a zombie. */
  readonly startTime: (pid: number) => string | undefined
  /** This boot's id: start times only compare within one. */
  readonly bootId: () => string | undefined
  /** Every living (not zombie) process in process group `pgid`. */
  readonly membersOf: (pgid: number) => ReadonlyArray<ProcStat>
  /** Whether `pid`'s environment holds exactly `entry` (`NAME=value`); false when it cannot be read. */
  readonly environHas: (pid: number, entry: string) => boolean
  /** The command line of `pid`, or undefined when it is gone. */
  readonly commandLine: (pid: number) => string | undefined
}

/** The facts `/proc` gives (Linux). */
export const procfs: Table = { name: "procfs", available, stat, startTime, bootId, membersOf, environHas, commandLine }

/** Sends `signal` to the whole group `pgid`; false when no process of it is left. */
export const signalGroup = (pgid: number, signal: NodeJS.Signals): boolean => {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}
