/**
 * One real `mcpx-fx daemon` (the bundle) shared by the tests of a describe block, reached at its
 * `/mcp` over loopback. The config is built from the sandbox so upstream `--log` files live inside
 * it; the daemon and the sandbox go when the block's scope closes.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as DaemonProcess from "./DaemonProcess.js"
import { type Endpoint, endpoint } from "./HttpMcp.js"
import { type Sandbox, sandbox } from "./Sandbox.js"
import type { ServeConfig, ServeConfigInput } from "./StdioServe.js"

/** A running daemon, its sandbox and its `/mcp`. */
export interface Running {
  readonly daemon: DaemonProcess.Daemon
  readonly sandbox: Sandbox
  readonly http: Endpoint
}

/**
 * A config that needs something started first (an HTTP upstream whose URL it names); whatever
 * it starts lives as long as the daemon.
 */
export type ConfigEffect = (sandbox: Sandbox) => Effect.Effect<ServeConfig, unknown, Scope.Scope>

/** Starts a daemon in a fresh sandbox with `mcpServers` and `settings` from `input`. */
export const start = (
  input: ServeConfigInput | { readonly effect: ConfigEffect },
  args: ReadonlyArray<string> = []
): Effect.Effect<Running, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const sb = yield* sandbox
    // What a config starts failing to start is a broken test setup, not an outcome to assert.
    const config = "effect" in input ? yield* Effect.orDie(input.effect(sb)) : typeof input === "function" ? input(sb) : input
    const file = yield* sb.writeJson("mcpx.json", { mcpServers: config.servers, settings: config.settings ?? {} })
    const daemon = yield* DaemonProcess.start(sb, { config: file, args })
    return { daemon, sandbox: sb, http: endpoint(daemon.info.mcp) }
  })

/** The daemon of a describe block. */
export class HttpDaemon extends Context.Tag("cli-test/HttpDaemon")<HttpDaemon, Running>() {
  static readonly layer = (input: ServeConfigInput | { readonly effect: ConfigEffect }, args: ReadonlyArray<string> = []) =>
    Layer.scoped(HttpDaemon, Effect.orDie(start(input, args)))
}
