/**
 * One HTTP request written with node:http, which (unlike fetch) sends whatever Host header it is
 * given — what a DNS-rebinding page's request looks like — and can go over the unix socket.
 */
import * as Effect from "effect/Effect"
import * as Http from "node:http"

/** Where and what to send. */
export interface RawRequest {
  /** The daemon's base URL (`info.url`), or a unix socket path with `socketPath`. */
  readonly url?: string
  readonly socketPath?: string
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
}

/** What came back. */
export interface RawReply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly text: string
  /** The body as JSON, when it is. */
  readonly json: unknown
}

export const send = (r: RawRequest): Effect.Effect<RawReply> =>
  Effect.async<RawReply>((resume) => {
    const base = r.url === undefined ? undefined : new URL(r.url)
    const request = Http.request(
      {
        method: r.method,
        path: r.path,
        headers: { ...(r.body !== undefined ? { "content-length": String(Buffer.byteLength(r.body)) } : {}), ...r.headers },
        ...(r.socketPath !== undefined ? { socketPath: r.socketPath } : { host: base?.hostname.replace(/^\[|\]$/g, ""), port: base?.port }),
        // A fresh connection per request: nothing of one test's request lingers into another's.
        agent: false
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (c: Buffer) => chunks.push(c))
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let json: unknown
          try {
            json = text.length > 0 ? JSON.parse(text) : undefined
          } catch {
            json = undefined
          }
          resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, text, json }))
        })
      }
    )
    request.on("error", (e) => resume(Effect.die(e)))
    request.end(r.body)
    return Effect.sync(() => request.destroy())
  })
