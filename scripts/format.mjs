// `npm run format` (write) and `npm run format:check` (--check: list what is not formatted, exit 1).
// dprint's TypeScript plugin run through @dprint/formatter (Wasm), configured by dprint.json: the
// dprint CLI ships one native binary per platform as optional packages, which a lock file written on
// one platform cannot always name, and `npm ci` then refuses the lock.
import { createContext } from "@dprint/formatter"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import picomatch from "picomatch"

const root = fileURLToPath(new URL("..", import.meta.url))
const check = process.argv.includes("--check")
const { includes, excludes, typescript, ...global } = JSON.parse(readFileSync(join(root, "dprint.json"), "utf8"))
const require = createRequire(import.meta.url)
const context = createContext(global)
context.addPlugin(readFileSync(require.resolve("@dprint/typescript/plugin.wasm")), typescript)

const included = picomatch(includes)
const excluded = picomatch(excludes)
const files = []
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === ".git") continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path)
    else {
      const rel = relative(root, path)
      if (included(rel) && !excluded(rel)) files.push(rel)
    }
  }
}
walk(root)

const unformatted = []
for (const rel of files) {
  const text = readFileSync(join(root, rel), "utf8")
  const formatted = context.formatText({ filePath: rel, fileText: text })
  if (formatted === text) continue
  unformatted.push(rel)
  if (!check) writeFileSync(join(root, rel), formatted)
}
if (check && unformatted.length > 0) {
  process.stderr.write(`not formatted (npm run format fixes them):\n${unformatted.map((f) => `  ${f}`).join("\n")}\n`)
  process.exit(1)
}
process.stdout.write(`${files.length} files ${check ? "checked" : "formatted"}${check ? "" : `, ${unformatted.length} changed`}\n`)
