/**
 * Process entry point: the only place that reads `process` (environment, working directory, home)
 * and decides the exit code. Logs go to stderr: stdout is reserved for command output and, under
 * `serve`, for JSON-RPC frames only.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { homedir } from "node:os"
import { run } from "./Cli.js"
import * as ExitCode from "./ExitCode.js"
import { ProcessEnvironment } from "./Layers.js"

// Warnings and worse by default: a command's output is what a person asked for; `--log-level`
// shows more.
const StderrLogger = Layer.merge(
  Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true })),
  Logger.minimumLogLevel(LogLevel.Warning)
)

const environment = ProcessEnvironment.layer({ env: process.env, cwd: process.cwd(), home: homedir() })

run(process.argv).pipe(
  // runMain would exit 1 for every failure; the code depends on the failure, so it is set here
  // and runMain sees success (it then leaves the exit to Node, which keeps process.exitCode).
  Effect.catchAllCause((cause) =>
    Effect.flatMap(ExitCode.report(cause), (code) =>
      Effect.sync(() => {
        process.exitCode = code
      }))
  ),
  Effect.provide(Layer.mergeAll(NodeContext.layer, StderrLogger, environment)),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
