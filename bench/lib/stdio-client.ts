/**
 * The direct connection: a minimal NDJSON JSON-RPC client on the upstream's stdin/stdout, with no
 * gateway between. It is the floor a gateway's added latency is measured from.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { performance } from "node:perf_hooks"
import { createInterface } from "node:readline"
import { checkEcho, type LoadResult } from "./load.js"

export interface StdioClient {
  readonly pid: number
  readonly request: (method: string, params: Record<string, unknown>) => Promise<unknown>
  readonly close: () => Promise<void>
}

/** What else the process prints: stdout lines that are not JSON (a node flag's trace), and stderr. */
export interface StdioHooks {
  readonly otherLine?: (line: string) => void
  readonly stderr?: (chunk: string) => void
}

/** Starts `command args` (with `env` added to this process's), initializes it (2025-11-25) and answers a client for it. */
export const startStdio = async (
  command: string,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>> = {},
  hooks: StdioHooks = {}
): Promise<StdioClient> => {
  const child: ChildProcessWithoutNullStreams = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } })
  child.stderr.setEncoding("utf8")
  child.stderr.on("data", (chunk: string) => hooks.stderr?.(chunk))
  const waiting = new Map<number, (m: unknown) => void>()
  let nextId = 1
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.trim().length === 0) return
    if (!line.startsWith("{")) return hooks.otherLine?.(line)
    const m = JSON.parse(line) as { id?: number }
    const w = m.id === undefined ? undefined : waiting.get(m.id)
    if (w !== undefined) {
      waiting.delete(m.id!)
      w(m)
    }
  })
  const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`)
  const request = (method: string, params: Record<string, unknown>) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++
      waiting.set(id, resolve)
      send({ jsonrpc: "2.0", id, method, params })
    })
  await request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench-direct", version: "0" } })
  send({ jsonrpc: "2.0", method: "notifications/initialized" })
  return {
    pid: child.pid!,
    request,
    close: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve())
        child.stdin.end()
      })
  }
}

/** Echo calls on the client, `concurrency` at a time, for `durationMs`; every answer checked. */
export const runStdioLoad = async (
  client: StdioClient,
  options: { readonly concurrency: number; readonly durationMs: number; readonly warmupCalls?: number; readonly tool?: string }
): Promise<LoadResult> => {
  const tool = options.tool ?? "echo"
  let n = 0
  const once = async (): Promise<number> => {
    const message = `d${++n}`
    const t0 = performance.now()
    const reply = await client.request("tools/call", { name: tool, arguments: { message } }) as { id: number }
    const ms = performance.now() - t0
    checkEcho(reply, reply.id, message)
    return ms
  }
  const warmup = options.warmupCalls ?? 0
  await Promise.all(Array.from({ length: options.concurrency }, async (_, w) => {
    for (let i = w; i < warmup; i += options.concurrency) await once()
  }))
  const latencies: Array<number> = []
  const t0 = performance.now()
  const deadline = t0 + options.durationMs
  await Promise.all(Array.from({ length: options.concurrency }, async () => {
    while (performance.now() < deadline) latencies.push(await once())
  }))
  const seconds = (performance.now() - t0) / 1000
  return { calls: latencies.length, seconds, rps: latencies.length / seconds, latencies: Float64Array.from(latencies) }
}
