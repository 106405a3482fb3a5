/**
 * The mcpx-fx command tree. This file only declares commands; the process, its environment and
 * the runtime are bin.ts's.
 */
import * as Command from "@effect/cli/Command"
import * as CallCommand from "./commands/Call.js"
import * as ConfigCommand from "./commands/Config.js"
import * as DaemonCommand from "./commands/Daemon.js"
import * as ElicitCommand from "./commands/Elicit.js"
import * as ProtocolCommand from "./commands/Protocol.js"
import { root } from "./commands/Root.js"
import * as ServeCommand from "./commands/Serve.js"
import * as SettingsCommand from "./commands/Settings.js"
import * as StatusCommand from "./commands/Status.js"
import * as StopCommand from "./commands/Stop.js"
import * as ToolsCommand from "./commands/Tools.js"
import { version } from "./version.js"

/** The whole `mcpx-fx` command. */
export const command = root.pipe(Command.withSubcommands([
  ToolsCommand.command,
  CallCommand.command,
  ElicitCommand.command,
  ProtocolCommand.protocol,
  ProtocolCommand.probe,
  SettingsCommand.command,
  ConfigCommand.command,
  ServeCommand.command,
  DaemonCommand.command,
  StatusCommand.command,
  StopCommand.command
]))

/** Parses argv and runs the matching command. */
export const run = Command.run(command, { name: "mcpx-fx", version })
