/**
 * Cold starts: how long a fresh `node` process takes to do one thing, next to `node -e 0` timed
 * in the same rounds. `serve` counts until the answer to its first request (initialize) is on
 * stdout; the others until the process has exited. Peak RSS of a one-shot command is read from
 * the process itself as it exits (a preloaded hook reads VmHWM), not from outside.
 */
import { spawn, spawnSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { createInterface } from "node:readline"

export interface Command {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly env?: NodeJS.ProcessEnv
  /** Timed until the first stdout line answers this stdin line, instead of until exit. */
  readonly firstAnswerTo?: string
}

/** Runs the command once; answers the wall time in ms. */
export const timeOnce = async (command: Command): Promise<number> => {
  const env = { ...process.env, ...command.env }
  if (command.firstAnswerTo === undefined) {
    const t0 = performance.now()
    const r = spawnSync(process.execPath, command.args, { stdio: "ignore", env })
    const ms = performance.now() - t0
    if (r.status !== 0) throw new Error(`${command.name} (${command.args.join(" ")}) exited ${r.status}`)
    return ms
  }
  const line = command.firstAnswerTo
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, command.args, { stdio: ["pipe", "pipe", "ignore"], env })
    child.stdin.write(`${line}\n`)
    const lines = createInterface({ input: child.stdout })
    let ms: number | undefined
    lines.once("line", () => {
      ms = performance.now() - t0
      child.stdin.end()
    })
    child.once("error", reject)
    child.once("exit", (code) => {
      if (ms === undefined) reject(new Error(`${command.name} exited ${code} without answering`))
      else resolve(ms)
    })
  })
}

/** A preload that writes the process's peak RSS (kB) to $MCPX_BENCH_HWM_OUT as it exits. */
export const writeHwmHook = (dir: string): string => {
  const file = join(dir, "hwm-hook.cjs")
  writeFileSync(
    file,
    "process.on('exit', () => { const s = require('fs').readFileSync('/proc/self/status', 'utf8');" +
      " const m = /VmHWM:\\s*(\\d+)/.exec(s); if (m) require('fs').writeFileSync(process.env.MCPX_BENCH_HWM_OUT, m[1]) })\n"
  )
  return file
}

/** The command's peak RSS in MB, read by the hook as it exits. */
export const peakRssOf = async (command: Command, hook: string, dir: string): Promise<number> => {
  const out = join(dir, `hwm-${command.name.replace(/[^a-z0-9]/gi, "_")}.txt`)
  const existing = process.env.NODE_OPTIONS ?? ""
  await timeOnce({
    ...command,
    env: { ...command.env, NODE_OPTIONS: `${existing} --require ${hook}`.trim(), MCPX_BENCH_HWM_OUT: out }
  })
  return Number(readFileSync(out, "utf8")) / 1024
}
