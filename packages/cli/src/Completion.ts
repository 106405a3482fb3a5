/**
 * Shell completion scripts (`mcpx-fx --completions bash|zsh|fish`), generated from the command
 * tree. @effect/cli's own scripts lose track after the first command word (`settings s` offered
 * the top-level words), so mcpx-fx writes its own: the script walks the words typed so far the way
 * the CLI reads them — skipping each option's value — to the command they name, and offers that
 * command's subcommands, or its options after a `-`.
 */
import * as CommandTree from "./CommandTree.js"

/** The shells a script is written for. */
export type Shell = "bash" | "zsh" | "fish"

/** Words to offer for a command's first argument, by command path (`settings get` → setting paths). */
export type ArgumentWords = Readonly<Record<string, ReadonlyArray<string>>>

/** Values offered after an option that takes one, where they are known in advance. */
const optionValues: Readonly<Record<string, ReadonlyArray<string>>> = {
  "--log-level": ["all", "trace", "debug", "info", "warning", "error", "fatal", "none"],
  "--log-format": ["text", "json"],
  "--completions": ["bash", "zsh", "fish"]
}

/** Options whose value is a file name. */
const fileOptions: ReadonlySet<string> = new Set(["--config"])

interface Row {
  readonly path: string
  readonly node: CommandTree.Node
}

const rows = (node: CommandTree.Node, path = ""): ReadonlyArray<Row> => [
  { path, node },
  ...node.children.flatMap((child) => rows(child, path === "" ? child.name : `${path} ${child.name}`))
]

const optionNames = (node: CommandTree.Node): ReadonlyArray<string> => node.options.flatMap((o) => o.names)
const valueOptions = (node: CommandTree.Node): ReadonlyArray<string> => node.options.filter((o) => o.takesValue).flatMap((o) => o.names)

// Every word here is a command or option name or a setting path: none needs quoting beyond "…".
const words = (list: ReadonlyArray<string>): string => list.join(" ")

const bash = (tree: CommandTree.Node, argumentWords: ArgumentWords): string => {
  const nodeCases = rows(tree).map(({ node, path }) =>
    [
      `    ${JSON.stringify(path)})`,
      `      children="${words(node.children.map((c) => c.name))}"`,
      `      options="${words(optionNames(node))}"`,
      `      values="${words(valueOptions(node))}"`,
      `      arguments="${words(argumentWords[path] ?? [])}"`,
      "      ;;"
    ].join("\n")
  )
  const valueCases = [
    ...Object.entries(optionValues).map(([option, values]) => `    ${option}) COMPREPLY=($(compgen -W "${words(values)}" -- "$cur")) ;;`),
    ...[...fileOptions].map((option) => `    ${option}) COMPREPLY=($(compgen -f -- "$cur")) ;;`),
    `    *) COMPREPLY=() ;;`
  ]
  return [
    "# mcpx-fx completion for bash. Load it with: source <(mcpx-fx --completions bash)",
    "_mcpx_fx_node() {",
    "  case \"$1\" in",
    ...nodeCases,
    "    *) children=\"\"; options=\"\"; values=\"\"; arguments=\"\" ;;",
    "  esac",
    "}",
    "_mcpx_fx() {",
    "  local cur prev path word i skip=0 children options values arguments",
    "  cur=\"${COMP_WORDS[COMP_CWORD]}\"",
    "  prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
    "  path=\"\"",
    "  for ((i = 1; i < COMP_CWORD; i++)); do",
    "    word=\"${COMP_WORDS[i]}\"",
    "    if [[ $skip == 1 ]]; then skip=0; continue; fi",
    "    _mcpx_fx_node \"$path\"",
    "    case \"$word\" in",
    "      --*=*) ;;",
    "      -*) [[ \" $values \" == *\" $word \"* ]] && skip=1 ;;",
    "      *) [[ \" $children \" == *\" $word \"* ]] && path=\"${path:+$path }$word\" ;;",
    "    esac",
    "  done",
    "  _mcpx_fx_node \"$path\"",
    "  if [[ $COMP_CWORD -gt 1 && \" $values \" == *\" $prev \"* ]]; then",
    "    case \"$prev\" in",
    ...valueCases.map((c) => `  ${c}`),
    "    esac",
    "    return 0",
    "  fi",
    "  if [[ \"$cur\" == -* ]]; then",
    "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))",
    "  elif [[ -n \"$children\" ]]; then",
    "    COMPREPLY=($(compgen -W \"$children\" -- \"$cur\"))",
    "  else",
    "    COMPREPLY=($(compgen -W \"$arguments\" -- \"$cur\"))",
    "  fi",
    "}",
    "complete -o default -F _mcpx_fx mcpx-fx",
    ""
  ].join("\n")
}

const zsh = (tree: CommandTree.Node, argumentWords: ArgumentWords): string =>
  [
    "# mcpx-fx completion for zsh. Load it with: source <(mcpx-fx --completions zsh)",
    "autoload -U +X bashcompinit && bashcompinit",
    bash(tree, argumentWords).split("\n").slice(1).join("\n")
  ].join("\n")

const fishQuote = (s: string): string => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`

const fish = (tree: CommandTree.Node, argumentWords: ArgumentWords): string => {
  const all = rows(tree)
  const pathCases = all.map(({ node, path }) =>
    [
      `        case ${fishQuote(path)}`,
      `            set children ${node.children.map((c) => c.name).join(" ")}`,
      `            set values ${valueOptions(node).join(" ")}`
    ].join("\n")
  )
  const lines: Array<string> = [
    "# mcpx-fx completion for fish. Load it with: mcpx-fx --completions fish | source",
    "# The command path the words typed so far name, each option's value skipped.",
    "function __mcpx_fx_path",
    "    set -l path ''",
    "    set -l skip 0",
    "    for word in (commandline -opc)[2..-1]",
    "        if test $skip = 1",
    "            set skip 0",
    "            continue",
    "        end",
    "        set -l children",
    "        set -l values",
    "        switch $path",
    ...pathCases,
    "        end",
    "        if string match -q -- '--*=*' $word",
    "            continue",
    "        else if string match -q -- '-*' $word",
    "            contains -- $word $values; and set skip 1",
    "        else if contains -- $word $children",
    "            if test -z \"$path\"",
    "                set path $word",
    "            else",
    "                set path \"$path $word\"",
    "            end",
    "        end",
    "    end",
    "    echo $path",
    "end",
    "complete -c mcpx-fx -f"
  ]
  for (const { node, path } of all) {
    const at = `-n ${fishQuote(`test (__mcpx_fx_path) = ${fishQuote(path)}`)}`
    for (const child of node.children) {
      lines.push(`complete -c mcpx-fx ${at} -a ${fishQuote(child.name)} -d ${fishQuote(child.summary)}`)
    }
    for (const option of node.options) {
      const long = option.names.filter((n) => n.startsWith("--")).map((n) => `-l ${n.slice(2)}`)
      const short = option.names.filter((n) => /^-[^-]$/.test(n)).map((n) => `-s ${n.slice(1)}`)
      const known = option.names.map((n) => optionValues[n]).find((v) => v !== undefined)
      const value = !option.takesValue
        ? ""
        : option.names.some((n) => fileOptions.has(n))
        ? " -r -F"
        : known !== undefined
        ? ` -x -a ${fishQuote(known.join(" "))}`
        : " -x"
      lines.push(`complete -c mcpx-fx ${at} ${[...long, ...short].join(" ")}${value}`)
    }
    const args = argumentWords[path]
    if (args !== undefined && args.length > 0) lines.push(`complete -c mcpx-fx ${at} -a ${fishQuote(args.join(" "))}`)
  }
  return `${lines.join("\n")}\n`
}

/** The completion script for `shell`. */
export const script = (shell: Shell, tree: CommandTree.Node, argumentWords: ArgumentWords = {}): string => {
  switch (shell) {
    case "bash":
      return bash(tree, argumentWords)
    case "zsh":
      return zsh(tree, argumentWords)
    case "fish":
      return fish(tree, argumentWords)
  }
}
