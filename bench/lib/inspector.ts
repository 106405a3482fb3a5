/**
 * A gateway's inspector (the Chrome DevTools Protocol over its WebSocket), for what only the process
 * itself can tell: sampled allocations (bench:gc) and the live heap after full collections (the
 * long run of `npm run bench`), which RSS cannot tell from the young generation's size at the time.
 */
import { WebSocket } from "undici"

export interface Inspector {
  readonly send: <A>(method: string, params?: object) => Promise<A>
  /** Every event of `method` to `listener`, until closed. */
  readonly on: (method: string, listener: (params: unknown) => void) => void
  readonly close: () => void
}

/** The inspector at `url` (printed on the process's stderr), one command at a time. */
export const connect = async (url: string | undefined): Promise<Inspector> => {
  if (url === undefined) throw new Error("the gateway printed no inspector URL")
  const ws = new WebSocket(url)
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true })
    ws.addEventListener("error", reject, { once: true })
  })
  let last = 0
  const waiting = new Map<number, (m: { result?: unknown; error?: { message: string } }) => void>()
  const listeners = new Map<string, (params: unknown) => void>()
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } }
    if (m.id !== undefined) waiting.get(m.id)?.(m)
    else if (m.method !== undefined) listeners.get(m.method)?.(m.params)
  })
  const send = <A>(method: string, params: object = {}) =>
    new Promise<A>((resolve, reject) => {
      const id = ++last
      waiting.set(id, (m) => {
        waiting.delete(id)
        if (m.error !== undefined) reject(new Error(`${method}: ${m.error.message}`))
        else resolve(m.result as A)
      })
      ws.send(JSON.stringify({ id, method, params }))
    })
  return { send, on: (method, listener) => listeners.set(method, listener), close: () => ws.close() }
}

/**
 * The inspector of a process started with `--inspect-port=0`: SIGUSR1 opens it on a free port of
 * 127.0.0.1 only then, so the process ran without it until now; its URL is read from `stderr`.
 */
export const openInspector = async (pid: number, stderr: () => string, timeoutMs = 10_000): Promise<Inspector> => {
  process.kill(pid, "SIGUSR1")
  const until = Date.now() + timeoutMs
  for (;;) {
    const url = /ws:\/\/127\.0\.0\.1:\d+\/\S+/.exec(stderr())?.[0]
    if (url !== undefined) return connect(url)
    if (Date.now() > until) throw new Error(`process ${pid} printed no inspector URL within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** The live heap after two full collections, in MB. */
export const liveHeapMb = async (inspector: Inspector): Promise<number> => {
  await inspector.send("HeapProfiler.collectGarbage")
  await inspector.send("HeapProfiler.collectGarbage")
  const { usedSize } = await inspector.send<{ usedSize: number }>("Runtime.getHeapUsage")
  return usedSize / 1024 / 1024
}

/** What the live heap holds: objects by constructor, closures by function, the rest by V8's type. */
export type Census = ReadonlyMap<string, { readonly count: number; readonly bytes: number }>

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: ReadonlyArray<string>; readonly node_types: ReadonlyArray<unknown> } }
  readonly nodes: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

/**
 * A census of the live heap from a heap snapshot, which the process writes to us in chunks (a few
 * seconds for the daemon's ~20 MB). Writing it takes the process's RSS up by ~100 MB that malloc
 * keeps, so RSS read after one is not comparable with RSS read before.
 */
export const census = async (inspector: Inspector): Promise<Census> => {
  await inspector.send("HeapProfiler.enable")
  const chunks: Array<string> = []
  inspector.on("HeapProfiler.addHeapSnapshotChunk", (p) => chunks.push((p as { chunk: string }).chunk))
  await inspector.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false })
  const s = JSON.parse(chunks.join("")) as Snapshot
  const fields = s.snapshot.meta.node_fields
  const width = fields.length
  const [typeAt, nameAt, sizeAt] = [fields.indexOf("type"), fields.indexOf("name"), fields.indexOf("self_size")]
  const types = s.snapshot.meta.node_types[0] as ReadonlyArray<string>
  const kinds = new Map<string, { count: number; bytes: number }>()
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]!]!
    const kind = type === "object" || type === "closure" ? `${s.strings[s.nodes[i + nameAt]!]} (${type})` : `(${type})`
    const k = kinds.get(kind) ?? { count: 0, bytes: 0 }
    k.count++
    k.bytes += s.nodes[i + sizeAt]!
    kinds.set(kind, k)
  }
  return kinds
}

/** The kinds whose count grew most from `before` to `after`, with their growth in count and bytes. */
export const grown = (before: Census, after: Census, top: number) =>
  [...after].map(([kind, a]) => {
    const b = before.get(kind) ?? { count: 0, bytes: 0 }
    return { kind, count: a.count - b.count, bytes: a.bytes - b.bytes }
  }).filter((g) => g.count > 0).sort((x, y) => y.count - x.count).slice(0, top)
