/**
 * The command line as read before @effect/cli parses it, for what @effect/cli does not do itself:
 *
 * - `--log-level LEVEL` and `--log-format text|json` anywhere (before `--`): @effect/cli only finds
 *   such options in some positions; they are taken out here and applied to the whole run.
 * - A mistyped command word (`mcpx-fx stauts`, `mcpx-fx settings lsit`) is refused with the
 *   closest commands, exit 2, where @effect/cli would only list them all.
 * - An unknown option (`mcpx-fx tools --jsn`) is refused as an option, with the closest of the
 *   command's options, exit 2: @effect/cli would take it for an argument (a server named `--jsn`,
 *   search words) or misread the word after it. After `--` every word is an argument.
 * - `mcpx-fx`, `mcpx-fx --help` and `mcpx-fx help` get the short top-level help (`help <command>`
 *   is `<command> --help`); `--version` alone prints the version; `--completions SHELL` gets
 *   mcpx-fx's own completion script.
 *
 * Everything else goes to @effect/cli unchanged.
 */
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Completion from "./Completion.js"
import * as CommandTree from "./CommandTree.js"
import { closeMatches } from "@mcpx-fx/config/Suggest"
import { UsageError } from "./UsageError.js"

/** What the command line asks for. */
export type Plan =
  | {
    readonly _tag: "Run"
    /** The arguments for @effect/cli, `--log-level` and `--log-format` taken out. */
    readonly args: ReadonlyArray<string>
    /** The command named (its first word), or none (`mcpx-fx --wizard`). */
    readonly command: string | undefined
    readonly logLevel: Option.Option<LogLevel.LogLevel>
    readonly logFormat: Option.Option<LogFormat>
  }
  | { readonly _tag: "TopHelp" }
  /** A command's own help (`tools --help`, `help settings set`). */
  | { readonly _tag: "CommandHelp"; readonly path: ReadonlyArray<string>; readonly node: CommandTree.Node }
  | { readonly _tag: "Version" }
  | { readonly _tag: "Completions"; readonly shell: Completion.Shell }

const LogLevelFlag = "--log-level"

const levels: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
  ...LogLevel.allLevels.map((level) => [level._tag.toLowerCase(), level] as const),
  ["warn", LogLevel.Warning]
]

const levelNames = LogLevel.allLevels.map((l) => l._tag.toLowerCase()).join(", ")

const parseLevel = (value: string | undefined): Either.Either<LogLevel.LogLevel, UsageError> => {
  if (value === undefined || value === "") {
    return Either.left(new UsageError({ message: `${LogLevelFlag} needs a value: one of ${levelNames}` }))
  }
  const found = levels.find(([name]) => name === value.toLowerCase())
  return found === undefined
    ? Either.left(new UsageError({ message: `${LogLevelFlag}: expected one of ${levelNames}, got ${JSON.stringify(value)}` }))
    : Either.right(found[1])
}

/** How log lines are written: text for a person, or one JSON object per line for a log pipeline. */
export type LogFormat = "text" | "json"

export const LogFormatFlag = "--log-format"

/** `--log-format` and `MCPX_LOG_FORMAT` take one of these. */
export const parseFormat = (value: string | undefined, from = LogFormatFlag): Either.Either<LogFormat, UsageError> =>
  value === "text" || value === "json"
    ? Either.right(value)
    : Either.left(new UsageError({ message: `${from}: expected text or json, got ${JSON.stringify(value ?? "")}` }))

/** `FLAG VALUE` / `FLAG=VALUE` taken out of `head` (the words before `--`), at most once. */
const takeFlag = <A>(
  head: ReadonlyArray<string>,
  flag: string,
  parse: (value: string | undefined) => Either.Either<A, UsageError>
): Either.Either<{ readonly rest: ReadonlyArray<string>; readonly value: Option.Option<A> }, UsageError> => {
  const rest: Array<string> = []
  let value = Option.none<A>()
  for (let i = 0; i < head.length; i++) {
    const word = head[i]!
    const inline = word.startsWith(`${flag}=`)
    if (word !== flag && !inline) {
      rest.push(word)
      continue
    }
    if (Option.isSome(value)) return Either.left(new UsageError({ message: `${flag} is given more than once` }))
    const parsed = parse(inline ? word.slice(flag.length + 1) : head[++i])
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    value = Option.some(parsed.right)
  }
  return Either.right({ rest, value })
}

const shells: ReadonlyArray<Completion.Shell> = ["bash", "zsh", "fish"]

const parseShell = (value: string | undefined): Either.Either<Completion.Shell, UsageError> => {
  const shell = value === "sh" ? "bash" : shells.find((s) => s === value)
  return shell === undefined
    ? Either.left(new UsageError({ message: `--completions: expected one of bash, zsh, fish, got ${JSON.stringify(value ?? "")}` }))
    : Either.right(shell)
}

const unknownCommand = (word: string, path: ReadonlyArray<string>, node: CommandTree.Node): UsageError => {
  const names = node.children.map((c) => c.name)
  const close = closeMatches(word, names, (n) => [n])
  const what = path.length === 0 ? "command" : `${path.join(" ")} command`
  const hint = close.length > 0
    ? `did you mean ${close.slice(0, 3).join(" or ")}?`
    : `expected one of: ${names.join(", ")}`
  const more = path.length === 0 ? " (mcpx-fx --help lists the commands)" : ""
  return new UsageError({ message: `unknown ${what} ${JSON.stringify(word)}; ${hint}${more}` })
}

const unknownOption = (word: string, path: ReadonlyArray<string>, node: CommandTree.Node): UsageError => {
  const close = closeMatches(word.split("=")[0]!, node.options.flatMap((o) => o.names.filter((n) => n.startsWith("--"))), (n) => [n])
  const hint = close.length > 0 ? `; did you mean ${close.slice(0, 3).join(" or ")}?` : ""
  const where = path.length === 0 ? "" : ` for ${path.join(" ")}`
  const more = path.length === 0
    ? "mcpx-fx --help lists the commands and options"
    : `mcpx-fx ${path.join(" ")} --help lists its options; an argument that starts with - goes after --`
  return new UsageError({ message: `unknown option ${JSON.stringify(word)}${where}${hint} (${more})` })
}

/** `-` (stdin) and negative numbers are arguments, not options. */
const isOption = (word: string): boolean => word.startsWith("-") && word !== "-" && !/^-\d/.test(word)

/** Reads `args` (the words after `mcpx-fx`) against the command tree. */
export const plan = (args: ReadonlyArray<string>, tree: CommandTree.Node): Either.Either<Plan, UsageError> => {
  const dashes = args.indexOf("--")
  const head = dashes < 0 ? args : args.slice(0, dashes)
  const tail = dashes < 0 ? [] : args.slice(dashes)
  const leveled = takeFlag(head, LogLevelFlag, parseLevel)
  if (Either.isLeft(leveled)) return Either.left(leveled.left)
  const formatted = takeFlag(leveled.right.rest, LogFormatFlag, (v) => parseFormat(v))
  if (Either.isLeft(formatted)) return Either.left(formatted.left)
  const level = leveled.right.value
  const { rest, value: format } = formatted.right

  let node = tree
  const path: Array<string> = []
  let help = false
  let version = false
  let unknown: { readonly word: string; readonly path: ReadonlyArray<string>; readonly node: CommandTree.Node } | undefined
  // Set at the command's first argument: later words are its arguments or options, never commands.
  let inArguments = false
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!
    if (word === "--completions" || word.startsWith("--completions=")) {
      const shell = parseShell(word.includes("=") ? word.slice(word.indexOf("=") + 1) : rest[i + 1])
      return Either.map(shell, (s): Plan => ({ _tag: "Completions", shell: s }))
    }
    if (isOption(word)) {
      if (word === "--help" || word === "-h") help = true
      if (word === "--version") version = true
      const option = CommandTree.findOption(node, word.split("=")[0]!)
      // Before the first command word only the root's options are known; @effect/cli would take an
      // unknown one there for a mistyped command, and after it for an argument.
      if (option === undefined) unknown ??= { word, path: [...path], node }
      if (option?.takesValue === true && !word.includes("=")) i++
      continue
    }
    // A command's own arguments start at its first word that is not a subcommand.
    if (inArguments || node.children.length === 0) {
      inArguments = true
      continue
    }
    // `help` alone is the top-level help; `help settings set` is `settings set --help`.
    if (path.length === 0 && word === "help") {
      const topic = rest.slice(i + 1).filter((w) => !w.startsWith("-"))
      if (topic.length === 0) return Either.right({ _tag: "TopHelp" })
      return plan([...topic, "--help"], tree)
    }
    const child = node.children.find((c) => c.name === word)
    if (child === undefined) return Either.left(unknownCommand(word, path, node))
    node = child
    path.push(word)
  }
  if (unknown !== undefined) return Either.left(unknownOption(unknown.word, unknown.path, unknown.node))
  if (path.length === 0 && !rest.includes("--wizard")) {
    if (version && !help) return Either.right({ _tag: "Version" })
    return Either.right({ _tag: "TopHelp" })
  }
  if (help) return Either.right({ _tag: "CommandHelp", path, node })
  return Either.right({ _tag: "Run", args: [...rest, ...tail], command: path[0], logLevel: level, logFormat: format })
}
