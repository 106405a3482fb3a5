/**
 * `npm run bench:ops`: how many Effect operations and fibers one call costs in the daemon, and of
 * which kinds, counted in a copy of the built CLI whose fiber run loop is patched to count (the
 * build under test is left as it is). CPU per call follows the number of operations closely, and
 * unlike CPU the count does not move with the machine's load: it is what the call path's work is
 * steered by, and `npm run bench:compare` judges the result.
 *
 *   options: --calls N (default 4000) --legacy (a legacy session instead of modern calls)
 *            --capabilities JSON (what a modern host declares, default {}) --top N (kinds shown, default 30)
 *            --upstream legacy|dual|http|http-dual (what the daemon fronts, bench/lib/upstreams.ts; default legacy)
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { flag, option } from "./lib/args.js"
import { runLoad } from "./lib/load.js"
import { modernShape, pathsFrom, startMcpxFx } from "./lib/targets.js"
import { parseUpstreams, startUpstream, stoppingOnFailure } from "./lib/upstreams.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const calls = Number(option("calls") ?? 4000) || 4000
const top = Number(option("top") ?? 30) || 30
const legacy = flag("legacy")
const upstreamKind = parseUpstreams(option("upstream") ?? "legacy")[0]!
const capabilities = JSON.parse(option("capabilities") ?? "{}") as Record<string, unknown>

/** Inserts `insert` after the one place `anchor` occurs in `text`; a build where it does not occur once cannot be counted. */
const patchOnce = (text: string, anchor: string, insert: string): string => {
  const at = text.indexOf(anchor)
  if (at < 0 || text.indexOf(anchor, at + 1) >= 0) {
    throw new Error(`bench:ops: the bundle's Effect runtime has changed (${JSON.stringify(anchor)} is not there exactly once)`)
  }
  return text.slice(0, at + anchor.length) + insert + text.slice(at + anchor.length)
}

// The counter, preloaded into the daemon: SIGUSR2 starts counting, the next SIGUSR2 writes the
// counts beside this file. An operation is labelled by its kind and the code of its continuation.
const preload = `
const { writeFileSync } = require("node:fs")
const { join } = require("node:path")
let on = false, ops = 0, fibers = 0
const kinds = new Map()
const label = (op) => {
  let l = op._op
  for (const f of [op.effect_instruction_i0, op.effect_instruction_i1, op.effect_instruction_i2]) {
    if (typeof f === "function") l += " | " + f.toString().slice(0, 100).replace(/\\s+/g, " ")
  }
  return l
}
globalThis.__mcpxCountOp = (op) => { if (!on) return; ops++; const l = label(op); kinds.set(l, (kinds.get(l) ?? 0) + 1) }
globalThis.__mcpxCountFiber = () => { if (on) fibers++ }
process.on("SIGUSR2", () => {
  if (!on) { on = true; ops = 0; fibers = 0; kinds.clear(); writeFileSync(join(__dirname, "on"), ""); return }
  on = false
  writeFileSync(join(__dirname, "counts.json"), JSON.stringify({ ops, fibers, kinds: [...kinds] }))
})
`

const waitForFile = async (file: string): Promise<void> => {
  for (let i = 0; i < 500 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 10))
  if (!existsSync(file)) throw new Error(`bench:ops: the daemon wrote no ${file}`)
}

const main = async () => {
  const paths = pathsFrom(root)
  const built = join(root, "packages/cli/dist")
  // Inside the checkout, so the copy finds node_modules (better-sqlite3 is loaded from there).
  mkdirSync(join(root, "out"), { recursive: true })
  const dir = mkdtempSync(join(root, "out", "ops-"))
  try {
    const dist = join(dir, "dist")
    cpSync(built, dist, { recursive: true })
    for (const f of readdirSync(dist)) if (f.endsWith(".cache")) rmSync(join(dist, f))
    const main = join(dist, "mcpx-fx-main.cjs")
    let text = readFileSync(main, "utf8")
    text = patchOnce(text, "this.currentOpCount+=1;", " if (globalThis.__mcpxCountOp !== undefined) globalThis.__mcpxCountOp(cur);")
    const runtime = text.indexOf("FiberRuntime=class")
    const constructed = text.indexOf("super();", runtime)
    if (runtime < 0 || constructed < 0) throw new Error("bench:ops: the bundle's FiberRuntime has changed")
    const after = constructed + "super();".length
    text = text.slice(0, after) + " if (globalThis.__mcpxCountFiber !== undefined) globalThis.__mcpxCountFiber();" + text.slice(after)
    writeFileSync(main, text)
    const preloadFile = join(dir, "count.cjs")
    writeFileSync(preloadFile, preload)

    const upstream = await startUpstream(paths, upstreamKind)
    const daemon = await stoppingOnFailure(upstream, startMcpxFx({ ...paths, cli: join(dist, "mcpx-fx.js") }, ["bench"], ["-r", preloadFile], upstream.spec))
    try {
      const shape = legacy ? await daemon.legacy() : modernShape(daemon.modern.url, "bench__echo", capabilities)
      await runLoad(shape, { concurrency: 16, durationMs: 2000 })
      const r = await runLoad(shape, {
        concurrency: 16,
        durationMs: 120_000,
        maxCalls: calls,
        onStart: () => process.kill(daemon.pid, "SIGUSR2")
      })
      await waitForFile(join(dir, "on"))
      process.kill(daemon.pid, "SIGUSR2")
      await waitForFile(join(dir, "counts.json"))
      const counts = JSON.parse(readFileSync(join(dir, "counts.json"), "utf8")) as {
        readonly ops: number
        readonly fibers: number
        readonly kinds: ReadonlyArray<readonly [string, number]>
      }
      const per = (n: number) => (n / r.calls).toFixed(2).padStart(7)
      process.stdout.write(
        `${legacy ? "legacy session" : "modern"} tools/call at c=16, ${r.calls} calls: ` +
          `${(counts.ops / r.calls).toFixed(1)} Effect operations and ${(counts.fibers / r.calls).toFixed(2)} fibers per call\n\n`
      )
      for (const [kind, n] of [...counts.kinds].sort((a, b) => b[1] - a[1]).slice(0, top)) {
        process.stdout.write(`${per(n)}  ${kind.slice(0, 150)}\n`)
      }
    } finally {
      await daemon.stop()
      await upstream.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  process.stderr.write(`bench:ops failed: ${e instanceof Error ? e.stack : String(e)}\n`)
  process.exit(1)
})
