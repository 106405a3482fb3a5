/**
 * The HTTP load generator: `concurrency` workers, each with its own keep-alive connection, sending
 * one request after another for a fixed time. Every request has its own id and every answer is
 * checked (status, id, the echoed text), so a gateway that is fast because it is wrong is caught,
 * not measured. JSON and SSE replies are both read: a legacy session may answer either way.
 */
import * as http from "node:http"
import { performance } from "node:perf_hooks"

/** What one request looks like: its body and headers for a given id and message. */
export interface RequestShape {
  readonly url: URL
  readonly headers: (id: number) => Record<string, string>
  readonly body: (id: number, message: string) => string
}

/** One timed run. */
export interface LoadResult {
  readonly calls: number
  readonly seconds: number
  readonly rps: number
  /** Latency of each call, in milliseconds. */
  readonly latencies: Float64Array
}

/** A call whose answer was not the echo it asked for. */
export class WrongAnswer extends Error {}

/** The JSON-RPC message of a reply body: the body itself, or the last `data:` of an event stream. */
export const replyMessage = (contentType: string | undefined, body: string): unknown => {
  if (contentType?.startsWith("text/event-stream") === true) {
    let last: string | undefined
    for (const line of body.split("\n")) if (line.startsWith("data:") && line.length > 6) last = line.slice(5).trim()
    if (last === undefined) throw new WrongAnswer(`an event stream without a message: ${body.slice(0, 200)}`)
    return JSON.parse(last)
  }
  return JSON.parse(body)
}

/** Throws unless `reply` is the echo of `message` for request `id`. */
export const checkEcho = (reply: unknown, id: number, message: string): void => {
  const r = reply as { id?: unknown; result?: { content?: Array<{ text?: unknown }> }; error?: unknown }
  if (r.id !== id) throw new WrongAnswer(`answer for id ${JSON.stringify(r.id)} to request ${id}: ${JSON.stringify(reply).slice(0, 300)}`)
  const text = r.result?.content?.[0]?.text
  if (text !== message) throw new WrongAnswer(`request ${id} echoed ${JSON.stringify(text)}: ${JSON.stringify(reply).slice(0, 300)}`)
}

let nextId = 1

/** One POST on `agent`; resolves with the checked reply's latency in ms. */
const post = (agent: http.Agent, shape: RequestShape): Promise<number> =>
  new Promise((resolve, reject) => {
    const id = nextId++
    const message = `m${id}`
    const body = shape.body(id, message)
    const t0 = performance.now()
    const req = http.request(
      shape.url,
      {
        method: "POST",
        agent,
        headers: { ...shape.headers(id), "content-type": "application/json", "content-length": Buffer.byteLength(body) }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          try {
            if (res.statusCode !== 200) throw new WrongAnswer(`HTTP ${res.statusCode} for request ${id}: ${text.slice(0, 300)}`)
            checkEcho(replyMessage(res.headers["content-type"], text), id, message)
            resolve(performance.now() - t0)
          } catch (e) {
            reject(e)
          }
        })
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(body)
  })

/**
 * Runs `concurrency` workers for `durationMs` (after `warmupCalls` calls that are not counted),
 * each on its own keep-alive connection.
 */
export const runLoad = async (
  shape: RequestShape,
  options: {
    readonly concurrency: number
    readonly durationMs: number
    readonly warmupCalls?: number
    /** Stops after this many calls, if that comes before `durationMs`. */
    readonly maxCalls?: number
    /** Called when the counted calls begin (after the warm-up). */
    readonly onStart?: () => void
  }
): Promise<LoadResult> => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency })
  try {
    const warmup = options.warmupCalls ?? 0
    const warmWorkers = Array.from({ length: options.concurrency }, async (_, w) => {
      for (let i = w; i < warmup; i += options.concurrency) await post(agent, shape)
    })
    await Promise.all(warmWorkers)
    const latencies: Array<number> = []
    const max = options.maxCalls ?? Infinity
    let started = 0
    options.onStart?.()
    const t0 = performance.now()
    const deadline = t0 + options.durationMs
    const workers = Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < deadline && started < max) {
        started++
        latencies.push(await post(agent, shape))
      }
    })
    await Promise.all(workers)
    const seconds = (performance.now() - t0) / 1000
    return { calls: latencies.length, seconds, rps: latencies.length / seconds, latencies: Float64Array.from(latencies) }
  } finally {
    agent.destroy()
  }
}

/** Sends one POST and answers its status, headers and body (setup steps such as `initialize`). */
export const postOnce = (url: URL, headers: Record<string, string>, body: string) =>
  new Promise<{ readonly status: number; readonly headers: http.IncomingHttpHeaders; readonly body: string }>((resolve, reject) => {
    const req = http.request(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })
