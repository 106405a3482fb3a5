/** Small HTTP helpers shared by both HTTP transports. */
import type { IncomingMessage, ServerResponse } from "node:http"

export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

export const plain = (res: ServerResponse, status: number, text = "", headers: Record<string, string> = {}): void => {
  res.writeHead(status, text.length > 0 ? { "content-type": "text/plain", ...headers } : headers)
  res.end(text)
}

export const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}
