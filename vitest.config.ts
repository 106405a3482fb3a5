import { defineConfig } from "vitest/config"
import { projects } from "./vitest.workspace.js"

// silent "passed-only": a test's console output (an in-process daemon's log lines among it) is kept
// with the test and printed only when it fails, so a passing run prints vitest's report alone. It is
// a run-wide option, so it lives here and not in the projects' shared config.
export default defineConfig({ test: { projects, silent: "passed-only" } })
