/**
 * The mcpx-fx command tree. Subcommands are added as the gateway grows; this file only
 * declares commands, never provides Layers (that is bin.ts's job).
 */
import * as Command from "@effect/cli/Command"
import { version } from "./version.js"

/** The root `mcpx-fx` command. */
export const root = Command.make("mcpx-fx").pipe(
  Command.withDescription(
    "A dual-era Model Context Protocol gateway: fronts many MCP servers (stdio and Streamable HTTP) " +
      "and serves hosts in every protocol revision, 2024-11-05 through 2026-07-28."
  )
)

/** Parses argv and runs the matching command. */
export const run = Command.run(root, { name: "mcpx-fx", version })
