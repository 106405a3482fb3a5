/**
 * The mcpx-fx command tree. This file only declares commands; the process, its environment and
 * the runtime are bin.ts's.
 */
import * as Command from "@effect/cli/Command"
import * as ConfigCommand from "./commands/Config.js"
import { root } from "./commands/Root.js"
import * as SettingsCommand from "./commands/Settings.js"
import { version } from "./version.js"

/** The whole `mcpx-fx` command. */
export const command = root.pipe(Command.withSubcommands([SettingsCommand.command, ConfigCommand.command]))

/** Parses argv and runs the matching command. */
export const run = Command.run(command, { name: "mcpx-fx", version })
