/**
 * A command's `--help`: @effect/cli's help for it, with what does not help taken out. Every
 * command takes a flag per setting, which made each help ~300 lines of the same flags; they are named in one line instead, pointing at `mcpx-fx settings list`, which shows
 * each with its value, source, variable and default. The line @effect/cli adds under every option
 * to say its type ("A user-defined piece of text.") goes too: each option says what it is for.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as CommandTree from "./CommandTree.js"

const settingFlags: ReadonlySet<string> = new Set(SettingsRegistry.registry.map((s) => s.flag))

// What @effect/cli says of an option's type when the option says nothing more specific.
const typeBlurb =
  /^(A user-defined piece of text( that is confidential)?\.|A true or false value\.|An integer\.|A floating point number\.|An? (existing )?(file|directory|file or directory)( that must not exist)?\.|One of the following: .*|This setting is optional\.)$/

/** The words in front of the description of an option or argument: `--pool-max VALUE` → `--pool-max`. */
const optionName = (span: Span.Span): string => CommandTree.spanText(span).trim().split(/[\s,]/)[0] ?? ""

const SettingsLine = `Every setting is also a flag (--pool-max 3, --upstream-protocol follow, ${settingFlags.size} in all); ` +
  "mcpx-fx settings list shows each with its value, source, variable and default."

/** The usage line with the setting flags folded into one `[setting flags]`, where the first of them stood. */
const foldUsage = (text: string): string => {
  let folded = false
  return text.replace(/ ?\[(--[a-z0-9-]+) VALUE\]/g, (whole, flag: string) => {
    if (!settingFlags.has(flag)) return whole
    if (folded) return ""
    folded = true
    return " [setting flags]"
  })
}

const trim = (doc: HelpDoc.HelpDoc): HelpDoc.HelpDoc => {
  switch (doc._tag) {
    case "Paragraph":
      return typeBlurb.test(CommandTree.spanText(doc.value).trim()) ? HelpDoc.empty : doc
    case "DescriptionList": {
      const kept = doc.definitions
        .filter(([name]) => !settingFlags.has(optionName(name)))
        .map(([name, body]): [Span.Span, HelpDoc.HelpDoc] => [name, trim(body)])
      return kept.length === 0 ? HelpDoc.empty : HelpDoc.descriptionList([kept[0]!, ...kept.slice(1)])
    }
    case "Sequence":
      return HelpDoc.sequence(trim(doc.left), trim(doc.right))
    default:
      return doc
  }
}

const flatten = (doc: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> => doc._tag === "Sequence" ? [...flatten(doc.left), ...flatten(doc.right)] : [doc]

/** The help without @effect/cli's COMMANDS section, whose every line repeats the setting flags (`commands` lists them instead). */
const withoutCommands = (doc: HelpDoc.HelpDoc): HelpDoc.HelpDoc => {
  let inCommands = false
  return HelpDoc.blocks(
    flatten(doc).filter((block) => {
      if (block._tag === "Header") inCommands = CommandTree.spanText(block.value) === "COMMANDS"
      return !inCommands
    })
  )
}

/** A group's commands, one line each (their own `--help` has the rest). */
const commands = (node: CommandTree.Node, path: ReadonlyArray<string>): HelpDoc.HelpDoc => {
  const children = [...node.children].sort((a, b) => a.name.localeCompare(b.name))
  if (children.length === 0) return HelpDoc.empty
  const rows = children.map((c): [Span.Span, HelpDoc.HelpDoc] => [Span.text(c.name), HelpDoc.p(c.summary)])
  return HelpDoc.blocks([
    HelpDoc.h1("COMMANDS"),
    HelpDoc.descriptionList([rows[0]!, ...rows.slice(1)]),
    HelpDoc.p(`mcpx-fx ${path.join(" ")} <command> --help shows a command's options.`)
  ])
}

/** The help of `node`, the command `path` names. */
export const render = (node: CommandTree.Node, path: ReadonlyArray<string>, version: string): string =>
  HelpDoc.toAnsiText(HelpDoc.blocks([
    HelpDoc.p(`mcpx-fx ${version}`),
    HelpDoc.h1("USAGE"),
    ...node.usage().map((line) => HelpDoc.p(`$ mcpx-fx ${[...path.slice(0, -1), foldUsage(line)].join(" ")}`)),
    commands(node, path),
    trim(withoutCommands(node.help())),
    HelpDoc.h1("SETTINGS"),
    HelpDoc.p(SettingsLine)
  ])).trimEnd()
