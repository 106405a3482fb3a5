#!/usr/bin/env node
// Launcher for the bundled CLI, so the `mcpx-fx` bin link exists straight after `npm ci`.
import { existsSync } from "node:fs"

const bundle = new URL("../dist/mcpx-fx.js", import.meta.url)
if (!existsSync(bundle)) {
  process.stderr.write("mcpx-fx: the CLI is not built yet; run `npm run build` first.\n")
  process.exit(2)
}
await import(bundle.href)
