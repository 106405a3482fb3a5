/**
 * The CLI as the process runs it (loaded by bin.ts): the only place that reads `process`
 * (arguments, environment, working directory, home, which streams are terminals) and decides the
 * exit code. Logs go to stderr: stdout is reserved for command output and, under `serve`, for
 * JSON-RPC frames only.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { fileURLToPath } from "node:url"
import * as Argv from "./Argv.js"
import { argumentWords, run, tree } from "./Cli.js"
import * as Colour from "./Colour.js"
import * as Completion from "./Completion.js"
import * as ExitCode from "./ExitCode.js"
import { ProcessEnvironment } from "./Layers.js"
import * as Logging from "./Logging.js"
import * as TopHelp from "./TopHelp.js"
import type { UsageError } from "./UsageError.js"
import * as CommandHelp from "./CommandHelp.js"
import { version } from "./version.js"

const colour = {
  stdout: Colour.enabled(process.stdout.isTTY, process.env),
  stderr: Colour.enabled(process.stderr.isTTY, process.env)
}

const planned = Argv.plan(process.argv.slice(2), tree)

// Warnings and worse by default: a command's output is what a person asked for; `--log-level`
// shows more.
const level = Either.isRight(planned) && planned.right._tag === "Run"
  ? Option.getOrElse(planned.right.logLevel, () => LogLevel.Warning)
  : LogLevel.Warning
// `--log-format` first, then MCPX_LOG_FORMAT: read before anything logs; the config's `log.format` comes after.
const envFormat = process.env.MCPX_LOG_FORMAT
const format: Either.Either<Argv.LogFormat, UsageError> = Either.isRight(planned) && planned.right._tag === "Run" &&
    Option.isSome(planned.right.logFormat)
  ? Either.right(planned.right.logFormat.value)
  : envFormat === undefined || envFormat === ""
  ? Either.right("text")
  : Argv.parseFormat(envFormat, "MCPX_LOG_FORMAT")
// Neither chose: the config's `log.format` decides once the config is read (Logging.settle).
const formatFixed = (Either.isRight(planned) && planned.right._tag === "Run" && Option.isSome(planned.right.logFormat)) ||
  (envFormat !== undefined && envFormat !== "")
const StderrLogger = Logging.layer(Either.getOrElse(format, () => "text" as const), level, colour.stderr, formatFixed)

// NodeContext.layer without its worker manager and command executor, which nothing here uses
// (stdio upstreams run on node:child_process): their modules are then never loaded.
const platform = Layer.mergeAll(NodePath.layer, NodeTerminal.layer).pipe(
  Layer.provideMerge(NodeFileSystem.layer)
)

const environment = ProcessEnvironment.layer({ env: process.env, cwd: process.cwd(), home: homedir() })

// Beside the bundle in the repository and in the published package alike.
const readme = fileURLToPath(new URL("../README.md", import.meta.url))

const main = Effect.gen(function*() {
  if (Either.isLeft(planned)) return yield* planned.left
  if (Either.isLeft(format)) return yield* format.left
  const plan = planned.right
  switch (plan._tag) {
    case "TopHelp":
      return yield* Console.log(TopHelp.render(tree, version, existsSync(readme) ? readme : undefined))
    case "CommandHelp":
      return yield* Console.log(CommandHelp.render(plan.node, plan.path, version))
    case "Version":
      return yield* Console.log(version)
    case "Completions":
      return yield* Effect.sync(() => process.stdout.write(Completion.script(plan.shell, tree, argumentWords)))
    case "Run":
      return yield* run(plan.command)([...process.argv.slice(0, 2), ...plan.args])
  }
})

main.pipe(
  // runMain would exit 1 for every failure; the code depends on the failure, so it is set here
  // and runMain sees success (it then leaves the exit to Node, which keeps process.exitCode).
  Effect.catchAllCause((cause) =>
    Effect.flatMap(ExitCode.report(cause), (code) =>
      Effect.sync(() => {
        process.exitCode = code
      }))
  ),
  Effect.provide(Layer.mergeAll(platform, StderrLogger, environment)),
  (program) => Effect.consoleWith((base) => Effect.withConsole(program, Colour.console(base, colour))),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
