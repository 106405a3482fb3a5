/**
 * Process entry point. Logs go to stderr: stdout is reserved for command output and, under
 * `serve`, for JSON-RPC frames only.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { run } from "./Cli.js"

const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true }))

run(process.argv).pipe(
  Effect.provide(Layer.mergeAll(NodeContext.layer, StderrLogger)),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
