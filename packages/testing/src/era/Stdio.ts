/**
 * stdio: NDJSON frames on stdin/stdout. stdout carries nothing but frames (legacy-banner's banner
 * excepted: it exists to test that clients skip such lines); the process ends on stdin EOF.
 */
import { createInterface } from "node:readline"
import * as Connection from "./Connection.js"
import type { Context } from "./Context.js"
import { decode, frame, type Message } from "./Wire.js"

export const banner: ReadonlyArray<string> = [
  "era-server starting up...",
  "** not JSON: a banner, as some servers print **",
  "[info] ready"
]

export const run = (ctx: Context): void => {
  const exit = (code: number) => process.stdout.write("", () => process.exit(code))
  // A reader that went away is the end of the conversation, not a crash.
  process.stdout.on("error", () => process.exit(0))
  if (ctx.options.mode === "legacy-banner") process.stdout.write(banner.map((l) => `${l}\n`).join(""))
  const write = (m: Message) => process.stdout.write(`${frame(m)}\n`)
  const connection = Connection.make(ctx, write, (code) => process.exit(code))
  // Until stdin is read, what the client writes waits in the pipe, as it does for a server that
  // npx is still fetching; then it is all read, in order.
  const read = () => {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
    lines.on("line", (line) => {
      if (line.trim().length > 0) connection.receive(decode(line))
    })
    lines.on("close", () => {
      connection.close()
      exit(0)
    })
  }
  const delay = ctx.options.startDelayMs ?? 0
  if (delay > 0) setTimeout(read, delay)
  else read()
}
