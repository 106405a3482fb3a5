/**
 * A test's end of a stdio fixture: spawns the bundled program, writes frames, and waits on what
 * comes back (a frame matching a predicate, a reply by id, the process exit). Every wait is on an
 * event; a process that exits while something is awaited fails the wait instead of hanging it.
 */
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Fixtures from "../../Fixtures.js"
import { classify, type Id, type JsonObject, type Message, type Response } from "../Wire.js"

export class PeerError extends Data.TaggedError("PeerError")<{ readonly reason: string }> {}

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface StdioPeer {
  /** Writes one frame (any JSON, so tests can send malformed ones too). */
  readonly send: (frame: unknown) => Effect.Effect<void>
  /** Sends a request with a fresh id and waits for the reply with that id. */
  readonly request: (method: string, params?: JsonObject) => Effect.Effect<Response, PeerError>
  /** Waits for (and takes) the first unclaimed frame that matches. */
  readonly next: (what: string, match: (m: Message) => boolean) => Effect.Effect<Message, PeerError>
  /** Waits for the reply with this id. */
  readonly reply: (id: Id) => Effect.Effect<Response, PeerError>
  /** Every frame received so far, in order, claimed or not. */
  readonly frames: () => ReadonlyArray<Message>
  /** stdout lines that were not JSON (a banner). */
  readonly noise: () => ReadonlyArray<string>
  readonly stderr: () => string
  readonly closeStdin: Effect.Effect<void>
  readonly exit: Effect.Effect<Exit>
}

interface Waiter {
  readonly match: (m: Message) => boolean
  readonly resume: (e: Effect.Effect<Message, PeerError>) => void
}

const isResponseTo = (id: Id) => (m: Message): boolean => !("method" in m) && m.id === id

export const spawnStdio = (
  name: string,
  args: ReadonlyArray<string>
): Effect.Effect<StdioPeer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const { command, args: argv } = Fixtures.stdioCommand(name, args)
      const child = spawn(command, argv, { stdio: ["pipe", "pipe", "pipe"] })
      const history: Array<Message> = []
      const unclaimed: Array<Message> = []
      const noise: Array<string> = []
      let waiters: Array<Waiter> = []
      let stderr = ""
      let exit: Exit | undefined
      let nextId = 0
      child.stderr.on("data", (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-8000)
      })
      // Writes after the child is gone would throw EPIPE asynchronously; the exit is what tests look at.
      child.stdin.on("error", () => {})
      createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) => {
        let raw: unknown
        try {
          raw = JSON.parse(line)
        } catch {
          noise.push(line)
          return
        }
        const decoded = classify(raw)
        if (decoded._tag === "invalid") return void noise.push(line)
        const m = decoded.message
        history.push(m)
        const w = waiters.find((w) => w.match(m))
        if (w === undefined) return void unclaimed.push(m)
        waiters = waiters.filter((x) => x !== w)
        w.resume(Effect.succeed(m))
      })
      const exited = new Promise<Exit>((resolve) =>
        child.on("exit", (code, signal) => {
          exit = { code, signal }
          for (const w of waiters) {
            w.resume(Effect.fail(new PeerError({ reason: `exited (${code ?? signal}) while waiting; stderr: ${stderr}` })))
          }
          waiters = []
          resolve(exit)
        })
      )
      const send = (frame: unknown) =>
        Effect.sync(() => {
          child.stdin.write(`${JSON.stringify(frame)}\n`)
        })
      const next = (what: string, match: (m: Message) => boolean) =>
        Effect.async<Message, PeerError>((resume) => {
          const i = unclaimed.findIndex(match)
          if (i >= 0) return resume(Effect.succeed(unclaimed.splice(i, 1)[0] as Message))
          if (exit !== undefined) return resume(Effect.fail(new PeerError({ reason: `exited before ${what}; stderr: ${stderr}` })))
          const w: Waiter = { match, resume }
          waiters.push(w)
          return Effect.sync(() => {
            waiters = waiters.filter((x) => x !== w)
          })
        })
      const reply = (id: Id) => next(`reply ${JSON.stringify(id)}`, isResponseTo(id)) as Effect.Effect<Response, PeerError>
      const peer: StdioPeer = {
        send,
        next,
        reply,
        request: (method, params) => {
          const id = `t-${++nextId}`
          return send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }).pipe(
            Effect.zipRight(reply(id))
          )
        },
        frames: () => history,
        noise: () => noise,
        stderr: () => stderr,
        closeStdin: Effect.sync(() => void child.stdin.end()),
        exit: Effect.promise(() => exited)
      }
      return { peer, child, exited }
    }),
    ({ child, exited }) =>
      Effect.promise(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        return exited
      })
  ).pipe(Effect.map(({ peer }) => peer))
