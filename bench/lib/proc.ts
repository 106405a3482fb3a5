/**
 * What the kernel says about a process: CPU time from /proc/<pid>/stat (utime + stime, in clock
 * ticks) and memory from /proc/<pid>/status (VmRSS now, VmHWM the peak). Linux only, which is the
 * machine the targets are set for.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

let ticksPerSecond: number | undefined

/** The kernel's clock ticks per second (`getconf CLK_TCK`, 100 almost everywhere). */
export const clockTicks = (): number => {
  if (ticksPerSecond !== undefined) return ticksPerSecond
  try {
    ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    ticksPerSecond = 100
  }
  return ticksPerSecond
}

/** CPU time the process has used so far (user + system), in milliseconds. */
export const cpuMs = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  return ((utime + stime) * 1000) / clockTicks()
}

const statusKb = (pid: number, key: string): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const line = status.split("\n").find((l) => l.startsWith(`${key}:`))
  return line === undefined ? Number.NaN : Number(line.replace(/[^0-9]/g, ""))
}

/** Resident memory now, in MB. */
export const rssMb = (pid: number): number => statusKb(pid, "VmRSS") / 1024

/** The peak resident memory so far, in MB. */
export const peakRssMb = (pid: number): number => statusKb(pid, "VmHWM") / 1024

/** Samples a process's RSS every `everyMs` until stopped; answers the highest seen. */
export const sampleRss = (pid: number, everyMs = 100): { readonly stop: () => number } => {
  let max = 0
  const take = () => {
    try {
      max = Math.max(max, rssMb(pid))
    } catch {
      // The process is gone; the samples so far stand.
    }
  }
  take()
  const timer = setInterval(take, everyMs)
  return {
    stop: () => {
      clearInterval(timer)
      take()
      return max
    }
  }
}
