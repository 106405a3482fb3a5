/**
 * `mcpx-fx serve`: mcpx-fx as a stdio MCP server for a host, with the gateway in-process.
 *
 * stdout is the JSON-RPC channel: nothing but frames may ever reach it, so this command writes no
 * progress line and no output of its own; logs and failures go to stderr (Main.ts).
 *
 * SIGINT/SIGTERM interrupt the command's fiber; the host on the other end is still listening, so
 * the interruption is turned into a stop: reading ends, requests in flight get
 * `transport.stdioDrain`, and what still runs after it is answered with an error before the
 * upstream servers are stopped.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type { GatewayConfigError } from "@mcpx-fx/gateway/GatewayModel"
import type * as BackendPort from "@mcpx-fx/server/Backend"
import type * as HostTasksPort from "@mcpx-fx/server/HostTasks"
import type { TaskStoreError } from "@mcpx-fx/server/TaskStore"
import * as Settings from "@mcpx-fx/config/Settings"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"
import * as DaemonClient from "../DaemonClient.js"
import * as Layers from "../Layers.js"
import * as Telemetry from "../Telemetry.js"
import { globalsFrom } from "./Root.js"

/** stdin could not be read. */
export class StdinError extends Data.TaggedError("StdinError")<{ readonly cause: unknown }> {
  override get message(): string {
    return `reading stdin failed: ${String(this.cause)}`
  }
}

const stdinLines: Stream.Stream<string, StdinError> = NodeStream.fromReadable(
  () => process.stdin,
  (cause) => new StdinError({ cause })
).pipe(Stream.decodeText(), Stream.splitLines)

/**
 * Completed when the host has closed its end of stdout: a write then fails (EPIPE), which with no
 * listener is an uncaught exception and a stack trace. A host that went away is treated as one that
 * closed stdin: serve stops as at end of input, its upstreams with it, and exits quietly.
 */
const hostGone = Deferred.unsafeMake<void>(FiberId.none)
const watchStdout: Effect.Effect<void> = Effect.sync(() => {
  if (process.stdout.listenerCount("error") > 0) return
  process.stdout.on("error", () => Deferred.unsafeDone(hostGone, Exit.void))
})

// Waiting for the write callback keeps a slow host from buffering replies without bound: each
// sender holds at most its one line. One `write` per line, so lines go out whole and in the order
// they were written (what StdioHost asks of it). A write after the host left goes nowhere.
const writeLine = (line: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (process.stdout.destroyed) return resume(Effect.void)
    process.stdout.write(`${line}\n`, () => resume(Effect.void))
  })

/** After the event loop's next turn: what is waiting on stdin has been read by then. */
const nextTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

// The host-facing server runs only here: its code is loaded when `serve` starts.
const loadHost = Effect.promise(() => import("./ServeModules.js"))

/** `serve --relay` found no daemon to relay to. */
export class NoDaemonToRelay extends Data.TaggedError("NoDaemonToRelay")<{ readonly detail: string }> {
  override get message(): string {
    return `--relay needs a running daemon (start one with \`mcpx-fx daemon\`): ${this.detail}`
  }
}

const relayOption = Options.boolean("relay").pipe(
  Options.withDescription(
    "Relay to the running daemon (over its unix socket) instead of running the gateway in this process, so " +
      "every host shares the daemon's upstream servers."
  )
)

/**
 * Runs `serving` until it ends. A signal interrupts the calling fiber, and an interrupted fiber's
 * children go with it at once; so `serving` runs as a fiber of its own, and an interruption only
 * tells it to stop (it completes `stop`) and waits for it to finish on its own.
 */
const untilStopped = <A, E, R>(serving: (stop: Effect.Effect<void>) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const stop = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkDaemon(serving(Deferred.await(stop)))
    return yield* Fiber.join(fiber).pipe(Effect.onInterrupt(() => Effect.zipRight(Deferred.succeed(stop, undefined), Fiber.await(fiber))))
  })

const relayToDaemon = Effect.gen(function*() {
  const info = yield* DaemonClient.running
  if (Option.isNone(info)) return yield* new NoDaemonToRelay({ detail: "no daemon.json for this state directory" })
  const drain = yield* Settings.get("transport.stdioDrain")
  // Only a relay speaks HTTP to the daemon: its code is loaded when one starts.
  const Relay = yield* Effect.promise(() => import("../Relay.js"))
  yield* watchStdout
  yield* untilStopped((stop) => Relay.relay(info.value.socket, stdinLines, writeLine, { drain, stop: Effect.race(stop, Deferred.await(hostGone)) }))
})

/** `mcpx-fx serve`. */
export const command = Command.make("serve", { globals: GlobalOptions.options, relay: relayOption }, ({ globals, relay }) =>
  Effect.gen(function*() {
    const options = yield* globalsFrom(globals)
    if (relay) {
      return yield* relayToDaemon.pipe(Effect.provide(Layers.configured(options)))
    }
    const { Backend, BackendWhenReady, GatewayBackend, HostTasks, HostTasksWhenReady, Server, StdioHost } = yield* loadHost
    yield* Effect.gen(function*() {
      const scope = yield* Effect.scope
      // The configuration first: the host's settings come from it, and a broken file is refused
      // before a word is said to the host.
      const configured = Layer.succeedContext(yield* Layer.buildWithScope(Layers.configuredAndNoticed(options), scope))
      // The gateway (pool, era cache, tool catalog, and the config watcher that turns a change to
      // the files into list_changed, as through the daemon) is built while the host is served:
      // `initialize` needs none of it, and every other request waits for it (BackendWhenReady).
      const backend = GatewayBackend.layer.pipe(Layer.provideMerge(Layers.watched(options, true, { configured })))
      const built = yield* Deferred.make<BackendPort.Backend["Type"], Layers.ConfiguredError | GatewayConfigError>()
      // Building is ~30 ms of CPU on this one thread. It starts once the host has said something
      // and the event loop has turned once more, so a first request that needs none of it
      // (`initialize`, `server/discover`) is answered before, not after. A host that never speaks
      // needs no gateway.
      const heard = yield* Deferred.make<void>()
      let spoken = false
      const lines = stdinLines.pipe(Stream.mapChunks((chunk) => {
        if (!spoken) {
          spoken = true
          Deferred.unsafeDone(heard, Exit.void)
        }
        return chunk
      }))
      const begin = Effect.zipRight(Deferred.await(heard), nextTurn)
      yield* Effect.forkIn(
        Effect.zipRight(begin, Effect.intoDeferred(Effect.map(Layer.buildWithScope(backend, scope), Context.get(Backend.Backend)), built)),
        scope
      )
      // The task store is opened the same way, after the gateway: only a task request waits for it.
      const tasksBuilt = yield* Deferred.make<HostTasksPort.HostTasks["Type"], TaskStoreError>()
      yield* Effect.forkIn(
        Effect.zipRight(
          Effect.zipRight(begin, Effect.exit(Deferred.await(built))),
          Effect.intoDeferred(
            Effect.map(Layer.buildWithScope(Layers.hostTasksAlone.pipe(Layer.provide(configured)), scope), Context.get(HostTasks.HostTasks)),
            tasksBuilt
          )
        ),
        scope
      )
      const ready = Deferred.await(built)
      // A failed build stops `serve` as a signal does (the requests waiting for it are answered
      // with its error), and `serve` then ends with that error.
      const failed = Effect.matchEffect(ready, { onFailure: () => Effect.void, onSuccess: () => Effect.never })
      const host = StdioHost.StdioHost.layer.pipe(
        Layer.provide(Server.Server.layer),
        Layer.provide(Layer.succeed(HostTasks.HostTasks, HostTasksWhenReady.whenReady(Deferred.await(tasksBuilt)))),
        Layer.provide(Layer.succeed(Backend.Backend, BackendWhenReady.whenReady(ready))),
        Layer.provide(Layers.requestState),
        Layer.provideMerge(configured)
      )
      const serving = Effect.gen(function*() {
        const drain = yield* Settings.get("transport.stdioDrain")
        const stdio = yield* StdioHost.StdioHost
        const maxBatch = yield* Settings.get("transport.maxBatch")
        yield* watchStdout
        yield* untilStopped((stop) =>
          stdio.serve(lines, writeLine, {
            drain,
            maxBatch,
            connectionId: `stdio-${process.pid}`,
            stop: Effect.raceAll([stop, failed, Deferred.await(hostGone)])
          })
        )
      }).pipe(Effect.provide(host))
      yield* serving
      if (yield* Deferred.isDone(built)) yield* Effect.asVoid(ready)
    }).pipe(Effect.scoped, Effect.provide(Telemetry.layer))
  })).pipe(
    Command.withDescription(
      describe(
        "Serve MCP over stdio for a host (any revision, 2024-11-05 through 2026-07-28), with the configured " +
          "servers behind it under their namespaces. stdout carries only JSON-RPC; logs go to stderr. " +
          "To add it to a host: {\"mcpServers\":{\"mcpx\":{\"command\":\"mcpx-fx\",\"args\":[\"serve\"]}}}",
        "mcpx-fx serve --config ~/.mcp.json"
      )
    )
  )
