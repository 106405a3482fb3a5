/**
 * The upstreams the gateways are measured in front of (issue 29): the era fixture as a legacy-only
 * stdio server, as a stdio server that also speaks 2026-07-28 (`dual`), and as a Streamable HTTP
 * server (`--http`), legacy-only: the minimal gateway forwards each call in the one session it opened
 * at start, with that session's headers, and a dual server takes a body carrying 2026-07-28 `_meta`
 * under 2025-11-25 headers as a contradiction (-32020), which is right of it. So `http-dual`, the
 * same server speaking 2026-07-28 too, is measured only when asked for (`bench:compare`, `bench:ops`
 * and `bench:profile`, where mcpx-fx alone fronts it).
 */
import { firstLine, legacyUpstream, type Paths, spawnGateway, stopGroup, type UpstreamSpec } from "./targets.js"

export const UpstreamKinds = ["legacy", "dual", "http", "http-dual"] as const
export type UpstreamKind = (typeof UpstreamKinds)[number]
/** What `npm run bench` measures when not told: every upstream the minimal gateway can front. */
const DefaultUpstreams: ReadonlyArray<UpstreamKind> = ["legacy", "dual", "http"]

export const upstreamLabel: Record<UpstreamKind, string> = {
  legacy: "stdio upstream, legacy only (era fixture, `legacy-32601`)",
  dual: "stdio upstream speaking 2025-11-25 and 2026-07-28 (era fixture, `dual`)",
  http: "Streamable HTTP upstream, legacy only (era fixture, `--http --mode legacy-32601`; tools/call answered as an event stream)",
  "http-dual": "Streamable HTTP upstream speaking 2025-11-25 and 2026-07-28 (era fixture, `--http --mode dual`)"
}

export interface Upstream {
  readonly kind: UpstreamKind
  readonly spec: UpstreamSpec
  /** The upstream's own process, when the bench runs one (the HTTP server); stdio ones belong to each gateway. */
  readonly stop: () => Promise<void>
}

export const startUpstream = async (paths: Paths, kind: UpstreamKind): Promise<Upstream> => {
  switch (kind) {
    case "legacy":
      return { kind, spec: legacyUpstream(paths), stop: async () => {} }
    case "dual":
      return { kind, spec: { stdio: [paths.eraServer, "--mode", "dual"] }, stop: async () => {} }
    case "http":
    case "http-dual": {
      const { child, stderrTail } = spawnGateway([paths.eraServer, "--http", "--mode", kind === "http" ? "legacy-32601" : "dual"])
      const ready = await firstLine(child, "the HTTP era fixture").catch((e: unknown) => {
        throw new Error(`${String(e)}; stderr: ${stderrTail()}`)
      })
      return { kind, spec: { url: String(ready.url) }, stop: () => stopGroup(child) }
    }
  }
}

/** What `starting` (a gateway in front of `upstream`) answers; if it fails, `upstream` is stopped first, so nothing is left running. */
export const stoppingOnFailure = async <A>(upstream: Upstream, starting: Promise<A>): Promise<A> => {
  try {
    return await starting
  } catch (e) {
    await upstream.stop()
    throw e
  }
}

/** `--upstream legacy,dual,http,http-dual` (legacy, dual and http when not given), checked. */
export const parseUpstreams = (value: string | undefined): ReadonlyArray<UpstreamKind> => {
  if (value === undefined) return DefaultUpstreams
  const kinds = value.split(",")
  for (const k of kinds) {
    if (!(UpstreamKinds as ReadonlyArray<string>).includes(k)) throw new Error(`--upstream takes ${UpstreamKinds.join(",")}; got ${k}`)
  }
  return kinds as ReadonlyArray<UpstreamKind>
}
