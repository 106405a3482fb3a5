/**
 * A 2026-07-28 host reaching the daemon — on its `/mcp` (HTTP), or through `mcpx-fx serve --relay`
 * (stdio carried to the daemon) — calling a legacy stdio upstream that asks (Flows.ts). One
 * daemon; a modern host's calls are each a caller of their own, so two tests sharing a stdio
 * upstream would have their questions held rather than routed: each test has its own.
 */
import { describe, layer } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { HttpDaemon } from "../support/HttpDaemon.js"
import { overHttp, overStdio } from "../support/ModernHost.js"
import type { Sandbox } from "../support/Sandbox.js"
import { start } from "../support/StdioServe.js"
import * as Flows from "./Flows.js"

const legacy = Fixtures.fixtureScript("sdk-v1-legacy")

const nsOf = (via: string, requirement: string) => `${via}_${requirement.replace(/-/g, "_")}`
const logOf = (sb: Sandbox, ns: string) => sb.path(`${ns}.log`)

const config = (sb: Sandbox) => ({
  servers: Object.fromEntries(
    ["http", "relay"].flatMap((via) => Flows.Every.map(([requirement]) => nsOf(via, requirement))).map((ns) => [ns, Flows.legacyServer(legacy, logOf(sb, ns))])
  ),
  // An upstream is done once its test is; it need not wait the default five minutes.
  settings: { "pool.idleTimeout": "10s" }
})

describe.concurrent("questions from a legacy upstream through the daemon", () => {
  layer(HttpDaemon.layer(config), { timeout: 60_000 })("daemon questions", (it) => {
    it.effect.each(Flows.Every)("2026-07-28/questions/%s [http]: %s", ([requirement, , flow]) =>
      Effect.scoped(Effect.gen(function*() {
        const { http, sandbox } = yield* HttpDaemon
        const ns = nsOf("http", requirement)
        yield* flow(overHttp(http), { ns, log: logOf(sandbox, ns) })
      })))

    it.effect.each(Flows.Every)("2026-07-28/questions/%s [relay]: %s", ([requirement, , flow]) =>
      Effect.scoped(Effect.gen(function*() {
        const { daemon, sandbox } = yield* HttpDaemon
        const ns = nsOf("relay", requirement)
        const relay = yield* start({ servers: {}, settings: { "transport.stdioDrain": "5s" } }, { args: ["--relay"], stateDir: daemon.stateDir })
        yield* flow(overStdio(relay, "relay"), { ns, log: logOf(sandbox, ns) })
      })))
  })
})
