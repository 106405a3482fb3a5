/**
 * The mcpx-fx command tree. This file only declares commands; the process, its environment and
 * the runtime are Main.ts's.
 */
import * as Command from "@effect/cli/Command"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as AuthCommand from "./commands/Auth.js"
import * as CallCommand from "./commands/Call.js"
import * as ConfigCommand from "./commands/Config.js"
import * as DaemonCommand from "./commands/Daemon.js"
import * as ElicitCommand from "./commands/Elicit.js"
import * as ProtocolCommand from "./commands/Protocol.js"
import * as SearchCommand from "./commands/Search.js"
import { root } from "./commands/Root.js"
import * as ServeCommand from "./commands/Serve.js"
import * as ServersCommand from "./commands/Servers.js"
import * as SettingsCommand from "./commands/Settings.js"
import * as StatusCommand from "./commands/Status.js"
import * as StopCommand from "./commands/Stop.js"
import * as TasksCommand from "./commands/Tasks.js"
import * as ToolsCommand from "./commands/Tools.js"
import * as UiCommand from "./commands/Ui.js"
import * as CommandTree from "./CommandTree.js"
import type * as Completion from "./Completion.js"
import { version } from "./version.js"

/** The commands under `mcpx-fx`, in the order help lists them. */
const subcommands = [
  ToolsCommand.command,
  SearchCommand.command,
  CallCommand.command,
  ElicitCommand.command,
  TasksCommand.command,
  ProtocolCommand.protocol,
  ProtocolCommand.probe,
  ServersCommand.command,
  SettingsCommand.command,
  ConfigCommand.command,
  ServeCommand.command,
  DaemonCommand.command,
  StatusCommand.command,
  StopCommand.command,
  UiCommand.command,
  AuthCommand.command
] as const

/** The whole `mcpx-fx` command. */
export const command = root.pipe(Command.withSubcommands(subcommands))

/** The command tree as data, for reading the command line, the top-level help and completions. */
export const tree: CommandTree.Node = CommandTree.make(root, subcommands)

/** What completion offers for a command's first argument. */
export const argumentWords: Completion.ArgumentWords = {
  "settings get": SettingsRegistry.paths,
  "settings set": SettingsRegistry.paths,
  "settings unset": SettingsRegistry.paths
}

/**
 * Parses argv and runs the matching command. With the command word already known (Argv.ts), only
 * that command goes under the root: @effect/cli works out the help and usage of every command it
 * is given at each parse, and the others' would be for nothing.
 */
export const run = (word: string | undefined) => {
  const named = subcommands.find((_, i) => tree.children[i]?.name === word)
  return Command.run(named === undefined ? command : root.pipe(Command.withSubcommands([named])), { name: "mcpx-fx", version })
}
