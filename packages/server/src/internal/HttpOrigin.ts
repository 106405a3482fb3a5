/**
 * The Origin policy of the `/mcp` endpoint (seed 002, "Origin"): a browser page may only reach the
 * gateway from an origin the user allowed, which is what defeats DNS rebinding.
 *
 * Allowed: no Origin at all (every non-browser client), a loopback host at any port over http or
 * https, the daemon's own origins, and the exact origins of `transport.allowedOrigins`. The
 * daemon's origins are named by configuration rather than read from the request's Host, because
 * Host is exactly what a rebinding attacker controls. `Origin: null` names nobody and is refused.
 */

/** Loopback hosts as `URL.hostname` spells them (IPv6 keeps its brackets). */
const LoopbackHosts: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]"]

const normalise = (origin: string): string | undefined => {
  try {
    const url = new URL(origin)
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : undefined
  } catch {
    return undefined
  }
}

/** Decides whether an Origin header value may reach the endpoint. */
export interface OriginPolicy {
  readonly allows: (origin: string | undefined) => boolean
  /**
   * The origin as a CORS reply names it, when it is one of `transport.allowedOrigins`: only those
   * may read replies from a page of their own. Loopback pages at other ports and the daemon's own
   * origin are allowed to send, but get no CORS grant.
   */
  readonly corsOrigin: (origin: string | undefined) => string | undefined
}

/** The policy for the daemon's own origins and the configured extra ones. */
export const makeOriginPolicy = (options: {
  readonly ownOrigins: ReadonlyArray<string>
  readonly allowedOrigins: ReadonlyArray<string>
}): OriginPolicy => {
  const exact = new Set<string>()
  const cors = new Set<string>()
  for (const o of [...options.ownOrigins, ...options.allowedOrigins]) {
    const n = normalise(o)
    if (n !== undefined) exact.add(n)
  }
  for (const o of options.allowedOrigins) {
    const n = normalise(o)
    if (n !== undefined) cors.add(n)
  }
  return {
    corsOrigin: (origin) => {
      if (origin === undefined) return undefined
      const n = normalise(origin.trim())
      return n !== undefined && cors.has(n) ? n : undefined
    },
    allows: (origin) => {
      if (origin === undefined) return true
      const n = normalise(origin.trim())
      if (n === undefined) return false
      if (exact.has(n)) return true
      return LoopbackHosts.includes(new URL(n).hostname)
    }
  }
}
