/**
 * How the CLI finds and talks to a running daemon: `daemon.json` in the state directory says
 * whether one is alive, and requests go over its owner-only unix socket (not TCP), so only this
 * user's processes reach the API through this path.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Path from "@effect/platform/Path"
import * as DaemonFiles from "@mcpx-fx/daemon/DaemonFiles"
import * as StateDir from "@mcpx-fx/config/StateDir"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import { ProcessEnvironment } from "./Layers.js"

/** This invocation's state directory, without reading any config file. */
export const stateDir: Layer.Layer<StateDir.StateDir, never, ProcessEnvironment | FileSystem.FileSystem | Path.Path> = Layer.unwrapEffect(
  Effect.map(ProcessEnvironment, (environment) => StateDir.StateDir.layer(environment))
)

/** The running daemon of this state directory, if any. */
export const running: Effect.Effect<
  Option.Option<DaemonFiles.DaemonInfo>,
  never,
  ProcessEnvironment | FileSystem.FileSystem | Path.Path
> = Effect.provide(DaemonFiles.readInfo, stateDir)

/**
 * An HttpClient whose every request goes to the daemon over its unix socket. Its code (undici, a
 * megabyte) is loaded only by a command that does talk to a daemon.
 */
export const socketClient = (socket: string): Layer.Layer<HttpClient.HttpClient> =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./DaemonSocket.js")), (m) => m.socketClient(socket)))
