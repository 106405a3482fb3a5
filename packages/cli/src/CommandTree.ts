/**
 * The command tree as data: each command's words, options, subcommands, one-line summary and
 * examples, read from the @effect/cli commands themselves. What reads the command line before
 * @effect/cli does (did-you-mean, `--log-level` anywhere), the short top-level help and the shell
 * completions all walk this, so a command added to Cli.ts shows up in each with no edit here.
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import type * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Usage from "@effect/cli/Usage"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Option from "effect/Option"

/** One option of a command. */
export interface OptionSpec {
  /** Every spelling, e.g. `["--help", "-h"]`. */
  readonly names: ReadonlyArray<string>
  /** Whether the next word is its value (`--config FILE`), as opposed to a flag (`--json`). */
  readonly takesValue: boolean
}

/** One command (or group of commands). */
export interface Node {
  readonly name: string
  readonly options: ReadonlyArray<OptionSpec>
  readonly children: ReadonlyArray<Node>
  /** The first sentence of its description. */
  readonly summary: string
  /** The example command lines of its help, in order. */
  readonly examples: ReadonlyArray<string>
  /** Its whole help, as @effect/cli writes it. */
  readonly help: () => HelpDoc.HelpDoc
  /** Its usage lines (one per alternative), as @effect/cli writes them. */
  readonly usage: () => ReadonlyArray<string>
}

/** The options @effect/cli adds to every command by itself. */
const builtIns: ReadonlyArray<OptionSpec> = [
  { names: ["--help", "-h"], takesValue: false },
  { names: ["--version"], takesValue: false },
  { names: ["--wizard"], takesValue: false },
  { names: ["--completions"], takesValue: true },
  { names: ["--log-level"], takesValue: true }
]

const optionsOf = (usage: Usage.Usage): ReadonlyArray<OptionSpec> => {
  switch (usage._tag) {
    case "Named":
      return usage.names.every((n) => n.startsWith("-"))
        ? [{ names: usage.names, takesValue: Option.isSome(usage.acceptedValues) }]
        : []
    case "Optional":
    case "Repeated":
      return optionsOf(usage.usage)
    case "Alternation":
    case "Concat":
      return [...optionsOf(usage.left), ...optionsOf(usage.right)]
    case "Empty":
    case "Mixed":
      return []
  }
}

/** The plain text of a help span. */
export const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Weak":
    case "Strong":
    case "Highlight":
      return spanText(span.value)
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
  }
}

/** The paragraphs of a help document's DESCRIPTION section, in order. */
const descriptionParagraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> => {
  const out: Array<string> = []
  let inDescription = false
  const walk = (d: HelpDoc.HelpDoc): void => {
    switch (d._tag) {
      case "Header":
        inDescription = spanText(d.value) === "DESCRIPTION"
        return
      case "Paragraph":
        if (inDescription) out.push(spanText(d.value))
        return
      case "Sequence":
        walk(d.left)
        walk(d.right)
        return
      default:
        return
    }
  }
  walk(doc)
  return out
}

const firstSentence = (text: string): string => {
  const end = text.search(/[.:](\s|$)/)
  return end < 0 ? text : text.slice(0, end)
}

const ExamplePrefix = "Example: "

const nodeOf = (descriptor: Descriptor.Command<unknown>, extraOptions: ReadonlyArray<OptionSpec>): Node => {
  const name = HashSet.values(Descriptor.getNames(descriptor)).next().value ?? ""
  // getSubcommands gives a plain command itself back, and a group's children (one level deep).
  const children = [...HashMap.values(Descriptor.getSubcommands(descriptor))]
    .filter((child) => !HashSet.has(Descriptor.getNames(child), name))
    .map((child) => nodeOf(child, builtIns))
  // Rendering a command's help and usage is most of the tree's cost, and a command line reads only
  // the options of the commands it names (the top-level help and the completions read the rest):
  // each is worked out when first read, not at every start.
  let paragraphs: ReadonlyArray<string> | undefined
  const help = () => Descriptor.getHelp(descriptor, CliConfig.defaultConfig)
  const usage = () => Usage.enumerate(Descriptor.getUsage(descriptor), CliConfig.defaultConfig).map(spanText)
  const described = () => (paragraphs ??= descriptionParagraphs(help()))
  let options: ReadonlyArray<OptionSpec> | undefined
  return {
    name,
    get options() {
      return (options ??= [...optionsOf(Descriptor.getUsage(descriptor)), ...extraOptions])
    },
    children,
    get summary() {
      return firstSentence(described().find((p) => !p.startsWith(ExamplePrefix)) ?? "")
    },
    get examples() {
      return described().filter((p) => p.startsWith(ExamplePrefix)).map((p) => p.slice(ExamplePrefix.length))
    },
    help,
    usage
  }
}

/**
 * The tree of `root` with `subcommands` under it (the list Cli.ts hands `Command.withSubcommands`,
 * in that order). A group's own subcommands are read from it; deeper levels are not (mcpx-fx has
 * none).
 */
export const make = (root: HasDescriptor, subcommands: ReadonlyArray<HasDescriptor>): Node => {
  const top = nodeOf(root.descriptor, builtIns)
  // Not a spread: that would read (and so render) the lazy summary and examples.
  const children = subcommands.map((c) => nodeOf(c.descriptor, builtIns))
  return {
    name: top.name,
    get options() {
      return top.options
    },
    children,
    get summary() {
      return top.summary
    },
    get examples() {
      return top.examples
    },
    help: top.help,
    usage: top.usage
  }
}

/** A command of @effect/cli, as far as the tree reads it. */
export interface HasDescriptor {
  readonly descriptor: Descriptor.Command<unknown>
}

/** The option of `node` spelled `word`, or undefined. */
export const findOption = (node: Node, word: string): OptionSpec | undefined => node.options.find((o) => o.names.includes(word))
