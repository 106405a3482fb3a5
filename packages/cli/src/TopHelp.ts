/**
 * The short top-level help (`mcpx-fx`, `mcpx-fx --help`): every command with one line and one
 * example, the options every command takes named once, and where to read more. A command's own
 * `--help` keeps the full reference (each option with its setting, variable and default).
 */
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import type * as CommandTree from "./CommandTree.js"

/**
 * One line per command where the first sentence of its description is too long for a summary; a
 * command without an entry (a new one) shows that sentence.
 */
const summaries: Readonly<Record<string, string>> = {
  tools: "List the tools hosts see, as <namespace>__<tool>",
  search: "Search the tools by name, namespace and description, best first",
  call: "Call a tool and print what it returned",
  elicit: "Answer the questions servers asked that wait in the daemon (list, answer, decline, cancel)",
  tasks: "Follow the calls the daemon runs as tasks (list, get, result, answer, cancel)",
  protocol: "Show each server's protocol preference, era and negotiated version",
  probe: "Probe one server's era now, step by step",
  servers: "List the configured servers, or add, remove, enable or disable one in a config file",
  settings: "Show and change settings (list, get, set, unset)",
  config: "Print the effective configuration and where it came from",
  serve: "Serve MCP over stdio for a host",
  daemon: "Run the gateway daemon: /mcp for hosts and the /v1 API",
  status: "Show the running daemon and its servers",
  stop: "Stop the running daemon gracefully",
  ui: "Print the address of the daemon's live page (servers, calls, questions, tasks, events)"
}

/** The help text. `readme` is where the packaged README is, when there is one. */
export const render = (tree: CommandTree.Node, version: string, readme: string | undefined): string => {
  const commands = tree.children
  const width = Math.max(...commands.map((c) => c.name.length))
  const lines = commands.flatMap((c) => [
    `  ${c.name.padEnd(width)}  ${summaries[c.name] ?? c.summary}`,
    ...c.examples.slice(0, 1).map((e) => `  ${" ".repeat(width)}    ${e}`)
  ])
  return [
    `mcpx-fx ${version}: one MCP gateway in front of many MCP servers, for hosts of every protocol revision`,
    "(2024-11-05 through 2026-07-28), over stdio and Streamable HTTP.",
    "",
    "Usage: mcpx-fx <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "Every command takes --config FILE (else .mcpx.json/.mcp.json/.vscode/mcp.json from here up), --json, --log-level LEVEL,",
    `--log-format json, and a flag per setting (${SettingsRegistry.registry.length} of them, e.g. --pool-call-timeout 2m; mcpx-fx settings list shows all).`,
    "",
    "More: mcpx-fx <command> --help shows a command's options and examples,",
    `mcpx-fx settings list every setting with its value and source${readme === undefined ? "." : `, and ${readme} the quick start.`}`
  ].join("\n")
}
