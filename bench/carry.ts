/**
 * `npm run bench:carry`: a reproduction, outside the daemon, of calls carried into old space. An
 * Effect program makes sequential node:http calls (one at a time, kept-alive, to the floor server
 * in a process of its own), each an `Effect.async` whose canceler holds either the call's
 * ClientRequest (`request`) or an unrelated array of the same order of size (`array`). Each run
 * is a fresh process under `--trace-gc-nvp`; it reports what scavenges promote once the run has
 * settled (its last quarter), per scavenge and per call.
 *
 * What it shows (docs/performance.md, "What a call allocates"): with V8's allocation-site
 * pretenuring on (Node's default), a run whose cancelers hold the request carries every call's
 * request, response and listeners into old space, scavenge after scavenge and through every
 * mark-compact, at several times the pause; with `--no-allocation-site-pretenuring`, or cancelers
 * that hold anything else, nothing is carried.
 *
 * The second reproduction is what carried the daemon's calls (found on 2026-12-05): plain
 * JavaScript, no Effect and no I/O, one call per turn of the event loop, each making a few KB of
 * state and running a generator over it. A generator function made per call (`function*` inside
 * the call, as `Effect.gen(function*() {…})` in a per-call closure is) carries every call into old
 * space; the same generator function made once (`Effect.fnUntraced`) carries nothing. Each new
 * generator function gets its own map for its generator objects, made in old space and pointing
 * back at the function, whose context holds the call.
 *
 *   options: --runs N (per variant, default 3) --calls N (per run, default 60000)
 *            --child request|array|generator|hoisted (one run, in this process: what the parent spawns)
 */
import { spawn } from "node:child_process"
import * as Http from "node:http"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import { option } from "./lib/args.js"
import { nvpPairs } from "./lib/gctrace.js"
import { pathsFrom, startFloor } from "./lib/targets.js"

const here = fileURLToPath(import.meta.url)
const root = fileURLToPath(new URL("../..", import.meta.url))
const calls = Number(option("calls") ?? 60000) || 60000

/** One run: `calls` calls in a row, each canceler holding what `holds` says. */
const child = async (holds: "request" | "array") => {
  const floor = await startFloor(pathsFrom(root))
  const agent = new Http.Agent({ keepAlive: true })
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { message: "hi" } } })
  let sink = 0
  // Made here, over its argument alone: the canceler reaches nothing else of the call.
  const cancelOver = (held: Http.ClientRequest | Array<number>) =>
    Effect.sync(() => {
      if (Array.isArray(held)) sink += held.length
      else held.destroy()
    })
  const call = Effect.async<string, Error>((resume) => {
    const request = Http.request(floor.modern.url, { method: "POST", agent, headers: { "content-type": "application/json" } })
    request.once("response", (response) => {
      let text = ""
      response.on("data", (c: Buffer) => {
        text += c
      })
      response.on("end", () => resume(Effect.succeed(text)))
    })
    request.on("error", (e) => resume(Effect.fail(e)))
    request.end(body)
    return cancelOver(holds === "request" ? request : new Array<number>(512).fill(sink))
  })
  await Effect.runPromise(Effect.repeatN(call, calls - 1))
  agent.destroy()
  await floor.stop()
}

/** One run of the second reproduction: `calls` calls, one per turn, each running a generator over its state. */
const generatorChild = async (made: "generator" | "hoisted") => {
  let sink = 0
  const once = function*(state: { readonly parts: ReadonlyArray<{ readonly s: string }> }) {
    return state.parts.length
  }
  for (let n = 0; n < calls; n++) {
    const state = { parts: Array.from({ length: 40 }, (_, i) => ({ s: `part ${i} of call ${n}` })) }
    const steps = made === "generator" ?
      (function*() {
        return state.parts.length
      })() :
      once(state)
    sink += steps.next().value ?? 0
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  if (sink < 0) process.stdout.write("unreachable\n")
}

interface Settled {
  readonly promotedPerScavenge: number
  readonly callsPerScavenge: number
  readonly pauseMs: number
}

/** What the last quarter of a run's scavenges promoted. */
const settled = (trace: string): Settled => {
  const scavenges = trace.split("\n").map(nvpPairs).filter((p) => p.get("gc") === "s")
  const last = scavenges.slice(Math.floor((scavenges.length * 3) / 4))
  const mean = (key: string) => last.reduce((sum, p) => sum + Number(p.get(key) ?? 0), 0) / Math.max(1, last.length)
  return {
    promotedPerScavenge: mean("promoted"),
    pauseMs: mean("pause"),
    callsPerScavenge: calls / Math.max(1, scavenges.length)
  }
}

const run = (holds: string, flags: ReadonlyArray<string>): Promise<Settled> =>
  new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...flags, "--trace-gc-nvp", here, "--child", holds, "--calls", String(calls)], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    proc.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c
    })
    proc.once("error", reject)
    proc.once("exit", (code) => (code === 0 ? resolve(settled(out)) : reject(new Error(`a run exited with ${code}`))))
  })

const parent = async () => {
  const runs = Number(option("runs") ?? 3) || 3
  process.stdout.write(`${calls} sequential node:http calls per run, ${runs} runs per variant; promoted once settled (last quarter of the scavenges)\n\n`)
  for (const flags of [[], ["--no-allocation-site-pretenuring"]]) {
    for (const holds of ["request", "array"]) {
      await variant(runs, holds, flags)
    }
  }
  process.stdout.write(`\n${calls} calls per run, one per turn of the event loop, each running a generator over a few KB of its own\n\n`)
  for (const made of ["generator", "hoisted"]) await variant(runs, made, [])
}

const labels: Record<string, string> = {
  request: "canceler holds the ClientRequest",
  array: "canceler holds the array      ",
  generator: "generator function made per call",
  hoisted: "generator function made once    "
}

const variant = async (runs: number, holds: string, flags: ReadonlyArray<string>) => {
  const results: Array<Settled> = []
  for (let i = 0; i < runs; i++) results.push(await run(holds, flags))
  const carrying = results.filter((r) => r.promotedPerScavenge > 64 * 1024).length
  const figures = results.map((r) =>
    `${(r.promotedPerScavenge / 1024).toFixed(0)} KB (${(r.promotedPerScavenge / r.callsPerScavenge).toFixed(0)} B/call, pause ${r.pauseMs.toFixed(1)} ms)`
  )
  process.stdout.write(
    `${labels[holds]}${flags.length > 0 ? `, ${flags.join(" ")}` : ""}: ${carrying} of ${runs} runs carry; per scavenge ${figures.join(", ")}\n`
  )
}

const childAt = process.argv.indexOf("--child")
const childKind = childAt >= 0 ? process.argv[childAt + 1] : undefined
if (childKind === "generator" || childKind === "hoisted") await generatorChild(childKind)
else if (childKind !== undefined) await child(childKind === "array" ? "array" : "request")
else await parent()
