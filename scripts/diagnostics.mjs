// Runs the Effect language service's diagnostics over every package project (plain tsc does not
// report floating Effects and similar). Fails on any finding.
import { spawnSync } from "node:child_process"
import { readdirSync, existsSync } from "node:fs"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const bin = join(root, "node_modules/.bin/effect-language-service")
let failed = false
for (const pkg of readdirSync(join(root, "packages"))) {
  for (const cfg of ["tsconfig.src.json", "tsconfig.test.json"]) {
    const project = join(root, "packages", pkg, cfg)
    if (!existsSync(project)) continue
    const r = spawnSync(bin, ["diagnostics", "--project", project], { encoding: "utf8" })
    const out = `${r.stdout ?? ""}${r.stderr ?? ""}`
    const findings = out.split("\n").filter((l) => /\b(error|warning)\b/i.test(l) && !/0 errors?/i.test(l))
    if (r.status !== 0 || findings.length > 0) {
      failed = true
      process.stderr.write(`diagnostics: packages/${pkg}/${cfg}\n${out}\n`)
    }
  }
}
if (failed) process.exit(1)
process.stdout.write("effect-language-service diagnostics: no findings\n")
