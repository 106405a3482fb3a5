#!/usr/bin/env node
/**
 * Process entry point. `--version` alone is answered here, before anything else is loaded. Any
 * other command line runs the CLI (Main.ts, bundled as mcpx-fx-main.cjs beside this file)
 * compiled from V8's code cache when there is one: compiling the bundle from source is a third of
 * a short command's CPU. The cache is written next to the bundle after a run that had none (or
 * whose cache this Node rejected), one for `serve`, one for `daemon` and one for every other
 * command; where that directory is not writable, every run compiles.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"
import { version } from "./version.js"
import { asAtStart, commandKind, sizeHeap } from "./HeapSizing.js"

const args = process.argv.slice(2)
const kind = commandKind(args)

const runMain = (): void => {
  const here = dirname(fileURLToPath(import.meta.url))
  const file = join(here, "mcpx-fx-main.cjs")
  // The bundle is ASCII (the build sees to it), so one byte per character.
  const source = readFileSync(file, "latin1")
  // Named for the bundle it was made from: V8 checks little more than the source's length, so a
  // rebuilt bundle must never meet an older build's cache. The long-running commands run code the
  // one-shot ones do not (and the reverse), so each has a cache of its own: none deserialises
  // functions it never calls or compiles its own from source because another command ran first.
  const stat = statSync(file)
  // The kind that sized the heap: V8 rejects a cache made under other flags (HeapSizing.ts).
  const own = kind === "one-shot" ? "" : `.${kind}`
  const cacheFile = join(here, `mcpx-fx-main.${stat.size}-${Math.trunc(stat.mtimeMs)}${own}.cache`)
  let cachedData: Buffer | undefined
  try {
    cachedData = readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  // The file is a function expression: the bundle inside the CommonJS wrapper (see scripts/bundle.mjs).
  const script = new vm.Script(source, {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData })
  })
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // At exit, so the cache holds every function this run compiled, not just the top level.
    process.once("exit", () => {
      asAtStart()
      try {
        const temp = `${cacheFile}.${process.pid}.tmp`
        writeFileSync(temp, script.createCachedData())
        renameSync(temp, cacheFile)
      } catch {
        // A read-only install: the next run compiles again.
      }
    })
  }
  const main = script.runInThisContext() as (
    exports: object,
    require: NodeRequire,
    module: { exports: object },
    filename: string,
    dirname: string
  ) => void
  const module = { exports: {} }
  main(module.exports, createRequire(file), module, file, here)
}

// Byte for byte what the command tree prints for it.
if (args.length === 1 && args[0] === "--version") process.stdout.write(`${version}\n`)
else {
  sizeHeap(kind)
  runMain()
}
