/**
 * `mcpx-fx serve` as a host sees it: the bundle runs as a child process with a config file and a
 * state directory inside a sandbox, and the test speaks NDJSON on its stdin and stdout.
 *
 * Every stdout line is checked as it arrives: one JSON-RPC message, or a non-empty array of them.
 * A line that is not makes every wait fail at once and is reported by `exited`, so no test can pass
 * while stdout carried something else. Waits end on events (a frame, the process exit), never on
 * the clock.
 */
import { Fixtures } from "@mcpx-fx/testing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { bundle, type Sandbox, sandbox } from "./Sandbox.js"

/** One JSON-RPC message as written on the wire. */
export type Message = Readonly<Record<string, unknown>>

/** A frame: one message, or a batch reply. */
export type Frame = Message | ReadonlyArray<Message>

/** What a finished `mcpx-fx serve` left behind. */
export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** Every stdout line, as written. */
  readonly lines: ReadonlyArray<string>
  /** Every stdout line that parsed as JSON-RPC. */
  readonly frames: ReadonlyArray<Frame>
  /** Lines that were not JSON-RPC (a test expects none). */
  readonly violations: ReadonlyArray<string>
  readonly stderr: string
}

/** A running `mcpx-fx serve`. */
export interface Serve {
  readonly sandbox: Sandbox
  /** Writes one message (or a batch), adding `"jsonrpc": "2.0"` to each. */
  readonly send: (message: Message | ReadonlyArray<Message>) => Effect.Effect<void>
  /** Writes one line exactly as given (for malformed input). */
  readonly sendLine: (line: string) => Effect.Effect<void>
  /** The response with this id, waiting for it if it has not come yet. */
  readonly reply: (id: string | number) => Effect.Effect<Message>
  /** Sends a request and waits for its response. */
  readonly request: (id: string | number, method: string, params?: Message) => Effect.Effect<Message>
  /** The first frame (from the start) that `select` accepts, waiting for it if need be. */
  readonly frame: <A>(select: (frame: Frame) => A | undefined, what: string) => Effect.Effect<A>
  /** Every frame so far. */
  readonly frames: Effect.Effect<ReadonlyArray<Frame>>
  /** Closes stdin, as a host does when it is done. */
  readonly end: Effect.Effect<void>
  /** Sends it a signal (SIGTERM: what a host or a process manager does to stop it). */
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** Waits for the process to exit. */
  readonly exited: Effect.Effect<Exited>
}

/** A configuration for one run: the `mcpServers` and `settings` of its config file. */
export interface ServeConfig {
  readonly servers: Readonly<Record<string, unknown>>
  readonly settings?: Readonly<Record<string, unknown>>
}

const isMessage = (v: unknown): v is Message =>
  typeof v === "object" && v !== null && !Array.isArray(v) && (v as Message).jsonrpc === "2.0" &&
  (typeof (v as Message).method === "string" || "result" in v || "error" in v)

const asFrame = (line: string): Frame | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch {
    return undefined
  }
  if (isMessage(parsed)) return parsed
  if (Array.isArray(parsed) && parsed.length > 0 && parsed.every(isMessage)) return parsed as ReadonlyArray<Message>
  return undefined
}

/**
 * The id of a single response frame, if it is one; null for an error that answers no request
 * (JSON-RPC writes `"id": null`; MCP's schema, which has no null id, leaves the member out).
 */
export const responseId = (frame: Frame): string | number | null | undefined => {
  if (Array.isArray(frame)) return undefined
  const m = frame as Message
  if (typeof m.method === "string") return undefined
  if (!("id" in m)) return null
  const id = m.id
  return typeof id === "string" || typeof id === "number" || id === null ? id : undefined
}

/** A config, or one built from the sandbox (to put upstream log files inside it). */
export type ServeConfigInput = ServeConfig | ((sandbox: Sandbox) => ServeConfig)

/** How to run `serve`, beyond its config; every member is optional. */
export interface StartOptions {
  /** Arguments after `serve --config <file>`, such as `--relay`. */
  readonly args?: ReadonlyArray<string>
  /** Its MCPX_STATE_DIR (default: a fresh one in its sandbox); a daemon's, for a relay to find it. */
  readonly stateDir?: string
  /** Variables added to its environment. */
  readonly env?: Readonly<Record<string, string>>
}

/** Starts `mcpx-fx serve --config <file>` in a fresh sandbox; killed when the scope closes. */
export const start = (input: ServeConfigInput, options: StartOptions = {}): Effect.Effect<Serve, never, Scope.Scope> =>
  Effect.gen(function*() {
    const sb = yield* sandbox
    const config = typeof input === "function" ? input(sb) : input
    const file = yield* sb.writeJson("mcpx.json", { mcpServers: config.servers, settings: config.settings ?? {} })
    const state = options.stateDir ?? (yield* sb.mkdir("state"))
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [bundle, "serve", "--config", file, ...(options.args ?? [])], {
          cwd: sb.root,
          env: {
            PATH: process.env.PATH ?? "",
            HOME: sb.home,
            XDG_CONFIG_HOME: `${sb.home}/.config`,
            MCPX_STATE_DIR: state,
            ...options.env
          },
          stdio: ["pipe", "pipe", "pipe"]
        })
      ),
      (c) => Effect.sync(() => c.kill("SIGKILL"))
    )
    const lines: Array<string> = []
    const frames: Array<Frame> = []
    const violations: Array<string> = []
    const waiters = new Set<() => void>()
    let buffered = ""
    let stderr = ""
    const wake = () => [...waiters].forEach((w) => w())
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      let at = buffered.indexOf("\n")
      while (at >= 0) {
        const line = buffered.slice(0, at)
        buffered = buffered.slice(at + 1)
        lines.push(line)
        const frame = asFrame(line)
        if (frame === undefined) violations.push(line)
        else frames.push(frame)
        at = buffered.indexOf("\n")
      }
      wake()
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    // Ignored: writing to a child that has exited is reported by the exit, which the waits watch.
    child.stdin.on("error", () => {})
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => {
        resolve({ code, signal })
        wake()
      })
    )
    const describeRun = () => `stdout so far:\n${lines.join("\n")}\nstderr:\n${stderr}`
    const until = <A>(ready: () => A | undefined, what: string): Effect.Effect<A> =>
      Effect.async<A>((resume) => {
        const check = () => {
          if (violations.length > 0) {
            waiters.delete(check)
            return resume(Effect.dieMessage(`stdout carried a line that is not JSON-RPC: ${violations[0]}\n${describeRun()}`))
          }
          const value = ready()
          if (value !== undefined) {
            waiters.delete(check)
            resume(Effect.succeed(value))
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check)
            resume(Effect.dieMessage(`mcpx-fx serve exited before ${what}\n${describeRun()}`))
          }
        }
        waiters.add(check)
        check()
        return Effect.sync(() => waiters.delete(check))
      })
    const write = (line: string) =>
      Effect.async<void>((resume) => {
        child.stdin.write(`${line}\n`, () => resume(Effect.void))
      })
    const stamp = (m: Message): Message => ({ jsonrpc: "2.0", ...m })
    const send = (message: Message | ReadonlyArray<Message>) => write(JSON.stringify(Array.isArray(message) ? message.map(stamp) : stamp(message as Message)))
    const frame = <A>(select: (frame: Frame) => A | undefined, what: string) =>
      until(() => {
        for (const f of frames) {
          const a = select(f)
          if (a !== undefined) return a
        }
        return undefined
      }, what)
    const reply = (id: string | number) => frame((f) => (responseId(f) === id ? (f as Message) : undefined), `replying to ${JSON.stringify(id)}`)
    return {
      sandbox: sb,
      send,
      sendLine: write,
      reply,
      request: (id, method, params) => Effect.zipRight(send(params === undefined ? { id, method } : { id, method, params }), reply(id)),
      frame,
      frames: Effect.sync(() => [...frames]),
      end: Effect.sync(() => {
        child.stdin.end()
      }),
      kill: (signal) =>
        Effect.sync(() => {
          child.kill(signal)
        }),
      exited: Effect.map(
        Effect.promise(() => exit),
        ({ code, signal }) => ({ code, signal, lines: [...lines], frames: [...frames], violations: [...violations], stderr })
      )
    } satisfies Serve
  })

/**
 * One `mcpx-fx serve` shared by the tests of a describe block. When the block is done its stdin
 * is closed, and the run must end with exit code 0 and nothing but JSON-RPC on stdout.
 */
export class SharedServe extends Context.Tag("cli-test/SharedServe")<SharedServe, Serve>() {
  static readonly layer = (config: ServeConfigInput, setup: (serve: Serve) => Effect.Effect<void> = () => Effect.void) =>
    Layer.scoped(
      SharedServe,
      Effect.gen(function*() {
        const serve = yield* start(config)
        yield* setup(serve)
        yield* Effect.addFinalizer(() =>
          Effect.gen(function*() {
            yield* serve.end
            const run = yield* serve.exited
            if (run.violations.length > 0 || run.code !== 0) {
              return yield* Effect.dieMessage(
                `the shared mcpx-fx serve ended with ${run.code ?? run.signal}; non-JSON-RPC lines: ${run.violations.join("\n")}\n${run.stderr}`
              )
            }
          })
        )
        return serve
      })
    )
}

/** An era-server upstream definition in `mode`, with extra flags. */
export const era = (mode: string, ...extra: ReadonlyArray<string>) => ({
  command: process.execPath,
  args: [Fixtures.fixtureScript("era-server"), "--mode", mode, ...extra]
})
