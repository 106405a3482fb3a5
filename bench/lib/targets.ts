/**
 * The gateways under test, each a child process of the bench in front of its own copy of the same
 * stdio upstream (by default the era fixture in `legacy-32601` mode: a legacy-only server, as most
 * servers in the wild are; see upstreams.ts for the others): the floor (a trivial Node HTTP server
 * with no upstream), the minimal gateway (bench/minimal-gateway.ts), punkpeye/mcp-proxy and the
 * mcpx-fx daemon. Each answers how to send it a modern (2026-07-28) echo call and how to open
 * a legacy (2025-11-25) session and send echo calls in it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { postOnce, type RequestShape } from "./load.js"

export const ModernRevision = "2026-07-28"
export const LegacyRevision = "2025-11-25"

export interface Paths {
  readonly root: string
  readonly cli: string
  readonly eraServer: string
  readonly floorServer: string
  readonly minimalGateway: string
  readonly mcpProxy: string
}

export const pathsFrom = (root: string): Paths => ({
  root,
  cli: join(root, "packages/cli/dist/mcpx-fx.js"),
  eraServer: join(root, "packages/testing/dist/era-server.js"),
  floorServer: join(root, "bench/dist/floor-server.js"),
  minimalGateway: join(root, "bench/dist/minimal-gateway.js"),
  mcpProxy: join(root, "bench/peers/node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs")
})

/**
 * The same paths, with another build's CLI: `dir` holds its mcpx-fx.js (a copy of packages/cli/dist).
 * The bundle leaves its native SQLite addon to node_modules, so the copy must sit where node finds
 * it (inside this checkout); one that cannot is refused here, before any process is started.
 */
export const withBuild = (paths: Paths, dir: string): Paths => {
  const cli = join(resolve(dir), "mcpx-fx.js")
  if (!existsSync(cli)) throw new Error(`${dir} holds no mcpx-fx.js: give a copy of packages/cli/dist`)
  try {
    createRequire(cli).resolve("better-sqlite3")
  } catch {
    throw new Error(
      `${dir} cannot reach node_modules/better-sqlite3, which the bundle loads at run time: copy the build inside this checkout (e.g. scratchpad/)`
    )
  }
  return { ...paths, cli }
}

/** The upstream every gateway fronts, and the direct client talks to. */
export const upstreamArgs = (paths: Paths): ReadonlyArray<string> => [paths.eraServer, "--mode", "legacy-32601"]

/**
 * What a gateway fronts: a stdio server (its arguments to this node; each gateway starts its own
 * copy) or a Streamable HTTP endpoint (one server, which the gateways share as they are measured
 * one after another).
 */
export type UpstreamSpec = { readonly stdio: ReadonlyArray<string> } | { readonly url: string }

export const legacyUpstream = (paths: Paths): UpstreamSpec => ({ stdio: upstreamArgs(paths) })

export interface Target {
  readonly name: string
  /** The gateway process, whose CPU and memory are measured. */
  readonly pid: number
  readonly modern: RequestShape
  /** Opens a legacy session (initialize, initialized) and answers how to call in it. */
  readonly legacy: () => Promise<RequestShape>
  readonly stop: () => Promise<void>
}

const accept = "application/json, text/event-stream"

/**
 * A 2026-07-28 tools/call of `tool`: its `_meta` envelope and the mirrored headers. The host
 * declares `capabilities` (none by default, as the bench's host can answer no question).
 */
export const modernShape = (url: URL, tool: string, capabilities: Record<string, unknown> = {}): RequestShape => ({
  url,
  headers: () => ({ accept, "mcp-protocol-version": ModernRevision, "mcp-method": "tools/call", "mcp-name": tool }),
  body: (id, message) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: tool,
        arguments: { message },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": ModernRevision,
          "io.modelcontextprotocol/clientCapabilities": capabilities,
          "io.modelcontextprotocol/clientInfo": { name: "bench", version: "0" }
        }
      }
    })
})

/** initialize + notifications/initialized, then tools/call of `tool` in that session. */
export const openLegacySession = async (url: URL, tool: string): Promise<RequestShape> => {
  const init = await postOnce(
    url,
    { accept },
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LegacyRevision, capabilities: {}, clientInfo: { name: "bench", version: "0" } }
    })
  )
  const session = init.headers["mcp-session-id"]
  if (init.status !== 200 || typeof session !== "string") {
    throw new Error(`initialize at ${url.href} answered ${init.status} without a session: ${init.body.slice(0, 300)}`)
  }
  const headers = { accept, "mcp-session-id": session, "mcp-protocol-version": LegacyRevision }
  const initialized = await postOnce(url, headers, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
  if (initialized.status !== 202 && initialized.status !== 200) throw new Error(`notifications/initialized answered ${initialized.status}`)
  return {
    url,
    headers: () => headers,
    body: (id, message) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: { message } } })
  }
}

/** Resolves with the child's first stdout line, parsed as JSON. */
export const firstLine = (child: ChildProcess, what: string, timeoutMs = 30_000): Promise<Record<string, unknown>> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} said nothing within ${timeoutMs} ms`)), timeoutMs)
    const lines = createInterface({ input: child.stdout! })
    lines.once("line", (line) => {
      clearTimeout(timer)
      lines.close()
      child.stdout!.resume()
      try {
        resolve(JSON.parse(line) as Record<string, unknown>)
      } catch {
        reject(new Error(`${what} printed ${line.slice(0, 200)}`))
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${what} exited ${code} before it was ready`))
    })
  })

/** Ends a child and everything it started (its process group), SIGKILL after `graceMs`. */
export const stopGroup = (child: ChildProcess, graceMs = 15_000): Promise<void> =>
  new Promise((resolve) => {
    const pid = child.pid!
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(-pid, s)
      } catch {
        // Already gone.
      }
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      signal("SIGKILL")
      resolve()
      return
    }
    const timer = setTimeout(() => signal("SIGKILL"), graceMs)
    child.once("exit", () => {
      clearTimeout(timer)
      // Whatever the gateway left of its group (an upstream it did not reap) goes too.
      signal("SIGKILL")
      resolve()
    })
    signal("SIGTERM")
  })

export const spawnGateway = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => {
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
    // Its own process group, so the upstreams it starts can be ended with it.
    detached: true
  })
  let stderr = ""
  child.stderr!.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000)
  })
  return { child, stderrTail: () => stderr }
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const a = s.address()
      const port = typeof a === "object" && a !== null ? a.port : 0
      s.close(() => resolve(port))
    })
  })

const waitForHttp = async (url: URL, what: string, timeoutMs = 30_000): Promise<void> => {
  const until = Date.now() + timeoutMs
  for (;;) {
    try {
      await postOnce(url, { accept }, "{}")
      return
    } catch (e) {
      if (Date.now() > until) throw new Error(`${what} did not listen within ${timeoutMs} ms: ${String(e)}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

/** The trivial Node HTTP server: what HTTP and JSON alone cost. */
export const startFloor = async (paths: Paths): Promise<Target> => {
  const { child } = spawnGateway([paths.floorServer])
  const ready = await firstLine(child, "the floor server")
  const url = new URL(`http://127.0.0.1:${String(ready.port)}/mcp`)
  return {
    name: "floor",
    pid: child.pid!,
    modern: modernShape(url, "echo"),
    legacy: () => openLegacySession(url, "echo"),
    stop: () => stopGroup(child)
  }
}

/** The minimal gateway in front of `upstream`; its tool names carry a `bench__` prefix, as mcpx-fx's do. */
export const startMinimal = async (
  paths: Paths,
  upstream: UpstreamSpec = legacyUpstream(paths),
  nodeFlags: ReadonlyArray<string> = []
): Promise<Target> => {
  const to = "url" in upstream ? ["--http", upstream.url] : ["--stdio", process.execPath, ...upstream.stdio]
  const { child, stderrTail } = spawnGateway([...nodeFlags, paths.minimalGateway, ...to])
  const ready = await firstLine(child, "the minimal gateway").catch((e: unknown) => {
    throw new Error(`${String(e)}; stderr: ${stderrTail()}`)
  })
  const url = new URL(`http://127.0.0.1:${String(ready.port)}/mcp`)
  return {
    name: "minimal",
    pid: child.pid!,
    modern: modernShape(url, "bench__echo"),
    legacy: () => openLegacySession(url, "bench__echo"),
    stop: () => stopGroup(child)
  }
}

/**
 * punkpeye/mcp-proxy in front of the upstream: Streamable HTTP on /mcp, 2026-07-28 served
 * alongside. It fronts a command only (stdio), so it has no place in front of an HTTP upstream.
 */
export const startMcpProxy = async (paths: Paths, upstream: UpstreamSpec = legacyUpstream(paths)): Promise<Target> => {
  if (!existsSync(paths.mcpProxy)) throw new Error(`mcp-proxy is not installed at ${paths.mcpProxy}`)
  if ("url" in upstream) throw new Error("mcp-proxy fronts stdio servers only")
  const port = await freePort()
  const { child, stderrTail } = spawnGateway([
    paths.mcpProxy,
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--server",
    "stream",
    "--",
    process.execPath,
    ...upstream.stdio
  ])
  child.stdout!.resume()
  const url = new URL(`http://127.0.0.1:${port}/mcp`)
  await waitForHttp(url, "mcp-proxy").catch((e: unknown) => {
    throw new Error(`${String(e)}; stderr: ${stderrTail()}`)
  })
  return {
    name: "mcp-proxy",
    pid: child.pid!,
    modern: modernShape(url, "echo"),
    legacy: () => openLegacySession(url, "echo"),
    stop: () => stopGroup(child)
  }
}

/** A config file with the given servers, each an upstream fixture; answers its path. */
export const writeConfig = (
  dir: string,
  paths: Paths,
  names: ReadonlyArray<string>,
  upstream: UpstreamSpec = legacyUpstream(paths)
): string => {
  const file = join(dir, "mcpx.json")
  const entry = "url" in upstream ? { url: upstream.url } : { command: process.execPath, args: upstream.stdio }
  const mcpServers = Object.fromEntries(names.map((n) => [n, entry]))
  writeFileSync(file, JSON.stringify({ mcpServers }))
  return file
}

/**
 * Starts a daemon and stops it, so that the next one starts from its code cache (packages/cli/src/bin.ts),
 * as every start after a build's first does. A daemon compiled from source holds ~8 MB more of
 * malloc's heap for its whole life (the parser's and compiler's memory, freed but not given back),
 * so an idle reading taken on a build's first start reads that, not what a daemon holds.
 */
export const warmDaemonCache = async (paths: Paths, upstream: UpstreamSpec = legacyUpstream(paths)): Promise<void> => {
  const daemon = await startMcpxFx(paths, ["bench"], [], upstream)
  await daemon.stop()
}

/** The mcpx-fx daemon on a config of `servers` (default one, `bench`), in a state directory of its own. */
export const startMcpxFx = async (
  paths: Paths,
  servers: ReadonlyArray<string> = ["bench"],
  nodeFlags: ReadonlyArray<string> = [],
  upstream: UpstreamSpec = legacyUpstream(paths)
): Promise<Target & { readonly dir: string; readonly stderrTail: () => string }> => {
  const dir = mkdtempSync(join(tmpdir(), "mcpx-bench-"))
  const config = writeConfig(dir, paths, servers, upstream)
  const { child, stderrTail } = spawnGateway(
    [...nodeFlags, paths.cli, "daemon", "--config", config, "--daemon-port", "0", "--json"],
    { MCPX_STATE_DIR: join(dir, "state") }
  )
  const info = await firstLine(child, "the mcpx-fx daemon").catch((e: unknown) => {
    throw new Error(`${String(e)}; stderr: ${stderrTail()}`)
  })
  const url = new URL(String(info.mcp))
  const tool = `${servers[0]}__echo`
  return {
    name: "mcpx-fx",
    pid: child.pid!,
    dir,
    stderrTail,
    modern: modernShape(url, tool),
    legacy: () => openLegacySession(url, tool),
    stop: async () => {
      await stopGroup(child)
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
