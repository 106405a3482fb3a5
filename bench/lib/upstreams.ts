/**
 * The upstreams the gateways are measured in front of (issue 29): the era fixture as a legacy-only
 * stdio server, as a stdio server that also speaks 2026-07-28 (`dual`), and as a Streamable HTTP
 * server (`--http`), legacy-only: the minimal gateway forwards each call in the one session it opened
 * at start, with that session's headers, and a dual server takes a body carrying 2026-07-28 `_meta`
 * under 2025-11-25 headers as a contradiction (-32020), which is right of it.
 */
import { firstLine, legacyUpstream, type Paths, spawnGateway, stopGroup, type UpstreamSpec } from "./targets.js"

export const UpstreamKinds = ["legacy", "dual", "http"] as const
export type UpstreamKind = (typeof UpstreamKinds)[number]

export const upstreamLabel: Record<UpstreamKind, string> = {
  legacy: "stdio upstream, legacy only (era fixture, `legacy-32601`)",
  dual: "stdio upstream speaking 2025-11-25 and 2026-07-28 (era fixture, `dual`)",
  http: "Streamable HTTP upstream, legacy only (era fixture, `--http --mode legacy-32601`; tools/call answered as an event stream)"
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
    case "http": {
      const { child, stderrTail } = spawnGateway([paths.eraServer, "--http", "--mode", "legacy-32601"])
      const ready = await firstLine(child, "the HTTP era fixture").catch((e: unknown) => {
        throw new Error(`${String(e)}; stderr: ${stderrTail()}`)
      })
      return { kind, spec: { url: String(ready.url) }, stop: () => stopGroup(child) }
    }
  }
}

/** `--upstream legacy,dual,http` (every one when not given), checked. */
export const parseUpstreams = (value: string | undefined): ReadonlyArray<UpstreamKind> => {
  if (value === undefined) return UpstreamKinds
  const kinds = value.split(",")
  for (const k of kinds) {
    if (!(UpstreamKinds as ReadonlyArray<string>).includes(k)) throw new Error(`--upstream takes ${UpstreamKinds.join(",")}; got ${k}`)
  }
  return kinds as ReadonlyArray<UpstreamKind>
}
