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
 * Which word is an option, an option's value or an argument is Node's `util.parseArgs`'s to say
 * (ArgvTokens.ts); this file only decides from its words. Everything else goes to @effect/cli
 * unchanged.
 */
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Completion from "./Completion.js"
import * as ArgvTokens from "./ArgvTokens.js"
import type * as CommandTree from "./CommandTree.js"
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

/**
 * The value of `flag`, given at most once among `options`: the first mistake in their order is the
 * one reported, as a person reading the line left to right would find it.
 */
const valueOf = <A>(
  options: ReadonlyArray<ArgvTokens.OptionWord>,
  flag: string,
  parse: (value: string | undefined) => Either.Either<A, UsageError>
): Either.Either<Option.Option<A>, UsageError> => {
  let value = Option.none<A>()
  for (const option of options) {
    if (option.spelling !== flag) continue
    if (Option.isSome(value)) return Either.left(new UsageError({ message: `${flag} is given more than once` }))
    const parsed = parse(option.value)
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    value = Option.some(parsed.right)
  }
  return Either.right(value)
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

/** A word that decides the plan by itself, whatever follows it (but the log flags, read anywhere). */
type Stop =
  | { readonly _tag: "Completions"; readonly shell: string | undefined }
  | {
    readonly _tag: "UnknownCommand"
    readonly word: string
    readonly path: ReadonlyArray<string>
    readonly node: CommandTree.Node
  }
  /** `help`, with the arguments after it: `help settings set` is `settings set --help`. */
  | { readonly _tag: "Help"; readonly topic: ReadonlyArray<string> }

/** An option, with the command it was read under. */
interface Read {
  readonly option: ArgvTokens.OptionWord
  readonly path: ReadonlyArray<string>
  readonly node: CommandTree.Node
}

/**
 * Walks the words against the tree: the words after a command word are read again with that
 * command's options, since those decide which word is an option's value. Every option before
 * `--` is kept, those after a stop too, for the log flags are read wherever they are.
 */
const scan = (args: ReadonlyArray<string>, tree: CommandTree.Node) => {
  let node = tree
  const path: Array<string> = []
  const options: Array<Read> = []
  const topic: Array<string> = []
  let stop: Stop | undefined
  // Set at the command's first argument: later words are its arguments or options, never commands.
  let inArguments = false
  let start = 0
  reading: while (true) {
    for (const word of ArgvTokens.read(args, start, node)) {
      if (word._tag === "Terminator") break reading
      if (word._tag === "Option") {
        options.push({ option: word, path: [...path], node })
        if (word.spelling === "--completions") stop ??= { _tag: "Completions", shell: word.value }
        continue
      }
      // A command's own arguments start at its first word that is not a subcommand.
      if (inArguments || stop !== undefined || node.children.length === 0) {
        inArguments = true
        // `-` and negative numbers are no command words: `help` leaves them out, as it did.
        if (stop?._tag === "Help" && !word.word.startsWith("-")) topic.push(word.word)
        continue
      }
      inArguments = true
      if (path.length === 0 && word.word === "help") {
        stop = { _tag: "Help", topic }
        continue
      }
      const child = node.children.find((c) => c.name === word.word)
      if (child === undefined) {
        stop = { _tag: "UnknownCommand", word: word.word, path: [...path], node }
        continue
      }
      node = child
      path.push(word.word)
      inArguments = false
      start = word.index + 1
      continue reading
    }
    break
  }
  return { options, path, node, stop }
}

/** The options whose value is checked by their own parser, with its own message. */
const ownValues: ReadonlyArray<string> = [LogLevelFlag, LogFormatFlag, "--completions"]

/** Reads `args` (the words after `mcpx-fx`) against the command tree. */
export const plan = (args: ReadonlyArray<string>, tree: CommandTree.Node): Either.Either<Plan, UsageError> => {
  const { node, options, path, stop } = scan(args, tree)
  const words = options.map((o) => o.option)
  const level = valueOf(words, LogLevelFlag, parseLevel)
  if (Either.isLeft(level)) return Either.left(level.left)
  const format = valueOf(words, LogFormatFlag, (v) => parseFormat(v))
  if (Either.isLeft(format)) return Either.left(format.left)

  switch (stop?._tag) {
    case "Completions":
      return Either.map(parseShell(stop.shell), (shell): Plan => ({ _tag: "Completions", shell }))
    case "UnknownCommand":
      return Either.left(unknownCommand(stop.word, stop.path, stop.node))
    case "Help":
      return stop.topic.length === 0 ? Either.right({ _tag: "TopHelp" }) : plan([...stop.topic, "--help"], tree)
  }
  // parseArgs gives an option that takes a value the word after it, whatever it is (`--config
  // --json`); its strict mode refuses one that looks like an option, and so does this. The log
  // flags and --completions say what they expected in their own words above.
  const dashed = words.find((w) =>
    w.valueIndex !== undefined && w.value !== undefined && ArgvTokens.looksLikeOption(w.value) && !ownValues.includes(w.spelling)
  )
  if (dashed !== undefined) {
    const { spelling, value } = dashed
    return Either.left(
      new UsageError({ message: `${spelling} needs a value, and ${JSON.stringify(value)} is an option (${spelling}=${value} gives that as the value)` })
    )
  }
  // Before the first command word only the root's options are known; @effect/cli would take an
  // unknown one there for a mistyped command, and after it for an argument.
  const unknown = options.find((o) => o.option.spec === undefined)
  if (unknown !== undefined) return Either.left(unknownOption(unknown.option.word, unknown.path, unknown.node))

  const said = (...spellings: ReadonlyArray<string>) => words.some((w) => spellings.includes(w.word))
  const help = said("--help", "-h")
  if (path.length === 0 && !said("--wizard")) {
    if (said("--version") && !help) return Either.right({ _tag: "Version" })
    return Either.right({ _tag: "TopHelp" })
  }
  if (help) return Either.right({ _tag: "CommandHelp", path, node })
  // What @effect/cli gets: every word but the log flags and their values.
  const taken = new Set(
    words.filter((w) => w.spelling === LogLevelFlag || w.spelling === LogFormatFlag)
      .flatMap((w) => (w.valueIndex === undefined ? [w.index] : [w.index, w.valueIndex]))
  )
  return Either.right({
    _tag: "Run",
    args: args.filter((_, i) => !taken.has(i)),
    command: path[0],
    logLevel: level.right,
    logFormat: format.right
  })
}
