/** The serving side of server-sent events: writing `event:`/`data:` frames is all a server needs. */
import type { ServerResponse } from "node:http"

export const open = (res: ServerResponse, headers: Record<string, string> = {}): void => {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
    ...headers
  })
  res.flushHeaders()
}

export const event = (res: ServerResponse, data: string, name = "message"): void => {
  if (!res.writableEnded && !res.destroyed) res.write(`event: ${name}\ndata: ${data}\n\n`)
}
