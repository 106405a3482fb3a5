/**
 * The Host policy of the daemon's TCP listener: a request must name the daemon by one of its own
 * addresses. A DNS-rebinding page reaches the daemon under the attacker's name (`Host:
 * evil.example:7717`), which no Origin check sees when the page and the name are the same; the
 * Host header is the one thing such a request cannot fake, since the browser writes it.
 *
 * Allowed: the daemon's own names (the loopback names and the bound address, given by the caller)
 * at the daemon's port, and the entries of `transport.allowedHosts`: `name` at any port (a
 * reverse proxy's name, whose Host carries no port) or `name:port` exactly.
 */
import { remembered } from "./Remembered.js"

/** A Host value split into a lower-case name (IPv6 in brackets, no trailing dot) and a port. */
interface HostName {
  readonly name: string
  readonly port: number | undefined
}

/** Parses a Host header value or an `allowedHosts` entry; undefined if it is not one. */
export const parseHost = (value: string): HostName | undefined => {
  const text = value.trim().toLowerCase()
  let name: string
  let rest: string
  if (text.startsWith("[")) {
    const close = text.indexOf("]")
    if (close < 0) return undefined
    name = text.slice(0, close + 1)
    rest = text.slice(close + 1)
  } else {
    const colon = text.indexOf(":")
    if (colon >= 0 && text.indexOf(":", colon + 1) >= 0) {
      // A bare IPv6 literal: only an entry may be written so, never a Host header.
      return /^[0-9a-f:.]+$/.test(text) ? { name: `[${text}]`, port: undefined } : undefined
    }
    name = colon < 0 ? text : text.slice(0, colon)
    rest = colon < 0 ? "" : text.slice(colon)
  }
  name = name.replace(/\.$/, "")
  if (name.length === 0 || !/^[a-z0-9.\-[\]:_]+$/.test(name)) return undefined
  if (rest === "") return { name, port: undefined }
  if (!/^:\d{1,5}$/.test(rest)) return undefined
  const port = Number(rest.slice(1))
  return port <= 65535 ? { name, port } : undefined
}

/** A name as a Host header writes it: IPv6 in brackets, lower case. */
export const hostForm = (address: string): string => {
  const a = address.trim().toLowerCase()
  return a.includes(":") && !a.startsWith("[") ? `[${a}]` : a
}

/** The loopback names a local client may use for the daemon. */
export const LoopbackNames: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]"]

/** Decides whether a Host header names this daemon. */
export interface HostPolicy {
  readonly allows: (host: string | undefined) => boolean
}

export const makeHostPolicy = (options: {
  readonly port: number
  readonly ownHosts: ReadonlyArray<string>
  readonly allowedHosts: ReadonlyArray<string>
}): HostPolicy => {
  const own = new Set([...LoopbackNames, ...options.ownHosts.map(hostForm)])
  const anyPort = new Set<string>()
  const exact = new Set<string>()
  for (const entry of options.allowedHosts) {
    const parsed = parseHost(entry)
    if (parsed === undefined) continue
    if (parsed.port === undefined) anyPort.add(parsed.name)
    else exact.add(`${parsed.name}:${parsed.port}`)
  }
  // The policy is fixed, so an answer is one per Host value (a client sends the same on every request).
  const allowsHost = remembered((host: string): boolean => {
    const parsed = parseHost(host)
    if (parsed === undefined) return false
    // No port in Host means the scheme's default, which the daemon is on only if it says so.
    const port = parsed.port ?? 80
    if (own.has(parsed.name) && port === options.port) return true
    return anyPort.has(parsed.name) || exact.has(`${parsed.name}:${port}`)
  })
  return { allows: (host) => host !== undefined && allowsHost(host) }
}
