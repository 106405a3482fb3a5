/**
 * What every handler of the era fixture needs: the parsed options, the method log, and the key
 * that signs `requestState` (per process, so a state minted by one fixture run is refused by the next).
 */
import { randomBytes } from "node:crypto"
import type { Era } from "@mcpx-fx/protocol/Revision"
import * as MethodLog from "./MethodLog.js"
import type { Options } from "./Options.js"
import type { JsonObject } from "./Wire.js"

export interface Context {
  /** The options as they stand now: an HTTP run can change its mode while it runs (`POST /control`). */
  readonly options: Options
  readonly log: MethodLog.MethodLog
  readonly secret: Buffer
  readonly reconfigure: (change: (options: Options) => Options) => void
}

export const make = (initial: Options): Context => {
  let options = initial
  return {
    get options() {
      return options
    },
    log: MethodLog.make(initial.log),
    secret: randomBytes(32),
    reconfigure: (change) => {
      options = change(options)
    }
  }
}

/** Which era and revision served a request: tools report it so a test can see the path taken. */
export interface Served {
  readonly era: Era
  readonly version: string
}

export const serverInfo = (ctx: Context): JsonObject => ({
  name: "era-server",
  title: `era-server (${ctx.options.mode})`,
  version: "1.0.0"
})

export const capabilities: JsonObject = { tools: { listChanged: false }, resources: {} }

/** What this run declares: `--list-changed` adds tools `listChanged` and resources `subscribe`. */
export const capabilitiesOf = (ctx: Context): JsonObject =>
  ctx.options.listChanged === true ? { tools: { listChanged: true }, resources: { subscribe: true } } : capabilities

/** Diagnostics go to stderr: stdout is the protocol channel on stdio and the URL line over HTTP. */
export const debug = (text: string): void => {
  process.stderr.write(`[era-server] ${text}\n`)
}
