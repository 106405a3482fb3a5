/**
 * The words of a command line, told apart by Node's own `util.parseArgs` (`tokens: true`): which
 * are options, which word is an option's value (`--config FILE`, `--config=FILE`), which are
 * arguments, and where `--` ends the options. It is given the options of one command of the tree
 * at a time, since what a word is depends on the command named before it (Argv.ts walks them).
 *
 * Three things parseArgs reads otherwise than mcpx-fx wants, put right here:
 * - A negative number (`settings set pool.max -1`) is an argument, where parseArgs reads `-1` as
 *   a short option (and `-12` as the group `-1 -2`).
 * - A group of short options (`-hx`) is one word to report as typed: mcpx-fx has one short
 *   option (`-h`), so a group is never something @effect/cli reads.
 * - parseArgs has no way to say "the options are those of the command named so far": so
 *   Argv.ts reads the words after each command word again with that command's options.
 */
import { parseArgs, type ParseArgsConfig } from "node:util"
import * as CommandTree from "./CommandTree.js"

/** An option as typed: `word` is the whole word (`--pool-max=3`), `spelling` its name (`--pool-max`). */
export interface OptionWord {
  readonly _tag: "Option"
  readonly index: number
  readonly word: string
  readonly spelling: string
  /** Its value, inline (`--x=v`) or the next word (`--x v`, when it takes one), if any. */
  readonly value: string | undefined
  /** Where that value is, when it is a word of its own. */
  readonly valueIndex: number | undefined
  /** The command's option it is, or undefined for an unknown one. */
  readonly spec: CommandTree.OptionSpec | undefined
}

export interface ArgumentWord {
  readonly _tag: "Argument"
  readonly index: number
  readonly word: string
}

/** `--`: every word after it is an argument. */
export interface Terminator {
  readonly _tag: "Terminator"
  readonly index: number
}

export type Word = OptionWord | ArgumentWord | Terminator

/** Options read the same under every command, whether the tree lists them or not. */
const globals: ReadonlyArray<CommandTree.OptionSpec> = [
  { names: ["--log-level"], takesValue: true },
  { names: ["--log-format"], takesValue: true },
  { names: ["--completions"], takesValue: true }
]

type Options = NonNullable<ParseArgsConfig["options"]>

const configs = new WeakMap<CommandTree.Node, Options>()

/** The parseArgs options of a command: each long name, with its one-letter short name if any. */
const configOf = (node: CommandTree.Node): Options => {
  const cached = configs.get(node)
  if (cached !== undefined) return cached
  const options: Options = {}
  for (const spec of [...globals, ...node.options]) {
    const long = spec.names.find((n) => n.startsWith("--"))
    const short = spec.names.find((n) => /^-[^-]$/.test(n))?.slice(1)
    // An option with no long name is declared under its letter; `--x` then reads as `-x`, which
    // no command of mcpx-fx has (its one short option, -h, has a long name).
    const key = long?.slice(2) ?? short
    if (key === undefined) continue
    options[key] = { type: spec.takesValue ? "string" : "boolean", ...(short === undefined ? {} : { short }) }
  }
  configs.set(node, options)
  return options
}

const specOf = (node: CommandTree.Node, spelling: string): CommandTree.OptionSpec | undefined =>
  CommandTree.findOption(node, spelling) ?? globals.find((o) => o.names.includes(spelling))

/** `-` (stdin) is already an argument to parseArgs; a negative number is one here too. */
const isNegativeNumber = (word: string): boolean => /^-\d/.test(word)

/** What parseArgs's strict mode refuses as an option's value in a word of its own (but -1). */
export const looksLikeOption = (word: string): boolean => word.length > 1 && word.startsWith("-") && !isNegativeNumber(word)

/** The words of `args` from `start` on, read with the options of `node`; indexes are into `args`. */
export const read = (args: ReadonlyArray<string>, start: number, node: CommandTree.Node): ReadonlyArray<Word> => {
  const { tokens } = parseArgs({
    args: args.slice(start),
    options: configOf(node),
    strict: false,
    allowPositionals: true,
    tokens: true
  })
  const words: Array<Word> = []
  for (const token of tokens) {
    const index = token.index + start
    if (token.kind === "option-terminator") {
      words.push({ _tag: "Terminator", index })
      continue
    }
    if (token.kind === "positional") {
      words.push({ _tag: "Argument", index, word: token.value })
      continue
    }
    const word = args[index]!
    const last = words[words.length - 1]
    // The second and later letters of a group: the group is one word, and not an option of ours.
    if (last !== undefined && last.index === index) {
      if (last._tag === "Option") words[words.length - 1] = { ...last, spelling: word, spec: undefined }
      continue
    }
    if (isNegativeNumber(word)) {
      words.push({ _tag: "Argument", index, word })
      continue
    }
    const separate = token.value !== undefined && token.inlineValue === false
    words.push({
      _tag: "Option",
      index,
      word,
      spelling: token.rawName,
      value: token.value,
      valueIndex: separate ? index + 1 : undefined,
      spec: specOf(node, token.rawName)
    })
  }
  return words
}
