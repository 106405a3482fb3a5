/**
 * The root `mcpx-fx` command, without its subcommands: subcommands read the global options given
 * before them from it, so it lives apart from the tree that Cli.ts assembles.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as GlobalOptions from "../GlobalOptions.js"
import { describe } from "../Help.js"

/** `mcpx-fx [global options] <command>`. */
export const root = Command.make("mcpx-fx", { globals: GlobalOptions.options }).pipe(
  Command.withDescription(
    describe(
      "A dual-era Model Context Protocol gateway: fronts many MCP servers (stdio and Streamable HTTP) " +
        "and serves hosts in every protocol revision, 2024-11-05 through 2026-07-28. " +
        "Every command takes --config FILE, --json and a flag for each setting.",
      "mcpx-fx settings list --config ./team.mcp.json --pool-max 3"
    )
  )
)

/**
 * The global options of this invocation: the ones given at each command level, nearest first,
 * combined with those given before the first command word.
 */
export const globalsFrom = (...nearestFirst: ReadonlyArray<GlobalOptions.Globals>) =>
  Effect.flatMap(root, ({ globals }) => GlobalOptions.combine([...nearestFirst, globals]))
