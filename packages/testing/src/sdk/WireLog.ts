/**
 * `--log <file>` for the official-SDK fixtures, in the era-server's format (era/MethodLog.ts) so
 * tests read both with one helper: `<era> <method>` for every request or notification received,
 * `asked <method>` for every question the server sends its client, and `answered <method>` when
 * the client's reply to one arrives. Each line is written synchronously before the message is
 * acted on (or sent), so a test that sees a line knows the message has reached the server (or is
 * on its way out) — how a test learns that a cancellation reached the upstream, or that a question
 * was asked, without sleeping.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { appendFileSync } from "node:fs"

type Id = string | number

const methodOf = (message: JSONRPCMessage): string | undefined => "method" in message && typeof message.method === "string" ? message.method : undefined

const idOf = (message: JSONRPCMessage): Id | undefined =>
  "id" in message && (typeof message.id === "string" || typeof message.id === "number") ? message.id : undefined

/** Logs what `transport` carries to `file` (nothing without one). Call after the server connected. */
export const logWire = (transport: Transport, file: string | undefined, era: string): void => {
  if (file === undefined) return
  const write = (line: string) => appendFileSync(file, `${line}\n`)
  const asked = new Map<Id, string>()
  const receive = transport.onmessage
  transport.onmessage = (message, extra) => {
    const method = methodOf(message)
    const id = idOf(message)
    if (method !== undefined) write(`${era} ${method}`)
    else if (id !== undefined && asked.has(id)) {
      write(`answered ${asked.get(id)}`)
      asked.delete(id)
    }
    receive?.(message, extra)
  }
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    const method = methodOf(message)
    const id = idOf(message)
    if (method !== undefined && id !== undefined) {
      asked.set(id, method)
      write(`asked ${method}`)
    }
    return send(message, options)
  }
}
