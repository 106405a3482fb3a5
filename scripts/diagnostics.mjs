// Runs the Effect language service's diagnostics over every package project (plain tsc does not
// report floating Effects and similar). Fails on any finding. Two projects at a time: each is one
// CPU-bound process, and CI's machine has two cores.
import { spawn } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const bin = join(root, "node_modules/.bin/effect-language-service")
const projects = readdirSync(join(root, "packages")).flatMap((pkg) =>
  ["tsconfig.src.json", "tsconfig.test.json"].map((cfg) => ({ pkg, cfg, path: join(root, "packages", pkg, cfg) })).filter((p) => existsSync(p.path))
)

const check = ({ pkg, cfg, path }) =>
  new Promise((resolve) => {
    const child = spawn(bin, ["diagnostics", "--project", path])
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (out += d))
    child.on("close", (code) => {
      const findings = out.split("\n").filter((l) => /\b(error|warning)\b/i.test(l) && !/0 errors?/i.test(l))
      if (code !== 0 || findings.length > 0) {
        process.stderr.write(`diagnostics: packages/${pkg}/${cfg}\n${out}\n`)
        resolve(false)
      } else resolve(true)
    })
  })

const queue = [...projects]
const workers = Array.from({ length: Math.min(2, availableParallelism()) }, async () => {
  let ok = true
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) ok = (await check(next)) && ok
  return ok
})
const results = await Promise.all(workers)
if (results.includes(false)) process.exit(1)
process.stdout.write(`effect-language-service diagnostics: no findings (${projects.length} projects)\n`)
