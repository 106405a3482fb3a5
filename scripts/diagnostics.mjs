// Runs the Effect language service's diagnostics (plain tsc does not report floating Effects and
// similar) over one program holding every package's sources and tests (tsconfig.diagnostics.json),
// so each file is checked once. Fails on any error or warning; the service's suggestions
// ("messages") are not findings.
import { spawnSync } from "node:child_process"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const bin = join(root, "node_modules/.bin/effect-language-service")
const project = join(root, "tsconfig.diagnostics.json")

const run = spawnSync(bin, ["diagnostics", "--project", project, "--format", "text", "--severity", "error,warning", "--strict"], {
  cwd: root,
  encoding: "utf8",
  maxBuffer: 64 * 1024 * 1024
})
const out = `${run.stdout ?? ""}${run.stderr ?? ""}`
const summary = /(\d+) errors?, (\d+) warnings?/.exec(out)
const clean = run.status === 0 && summary !== null && summary[1] === "0" && summary[2] === "0"
if (!clean) {
  process.stderr.write(`diagnostics: ${project}\n${out}\n`)
  if (run.error !== undefined) process.stderr.write(`${run.error.message}\n`)
  process.exit(1)
}
process.stdout.write(`effect-language-service diagnostics: no findings (${/Checked (\d+) files/.exec(out)?.[1] ?? "?"} files)\n`)
