/**
 * The stdio transport: the upstream is a child process speaking newline-delimited JSON-RPC on
 * stdin/stdout. Lines that are not JSON (banners some servers print) are skipped and logged;
 * stderr is kept as a bounded tail for error messages; a line over the size cap closes the
 * connection rather than growing memory without bound.
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as PlatformError from "@effect/platform/Error"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { StdioDefinition } from "./ServerDefinition.js"
import { FrameTooLarge, type Connection, type TransportError, TransportClosed } from "./Transport.js"
import { makeLineSplitter } from "./internal/lines.js"
import * as Waiting from "./internal/Waiting.js"

/** Tunables of the stdio transport. */
export interface StdioOptions {
  /** The largest stdout line accepted, in characters. */
  readonly maxLineBytes?: number
  /** How much of stderr to keep for error messages. */
  readonly stderrTailBytes?: number
  /** How long to wait after closing stdin, and again after SIGTERM, before the next step. */
  readonly killGrace?: Duration.DurationInput
}

const defaults = { maxLineBytes: 16 * 1024 * 1024, stderrTailBytes: 8 * 1024, killGrace: "2 seconds" } as const

/**
 * Why the process could not be started, in the words of the config that named it: a command that
 * is not there is the commonest first-run mistake, and the platform's own message
 * (`NotFound: Command.spawn (…): spawn … ENOENT`) does not say what to do about it.
 */
export const spawnFailure = (def: StdioDefinition, e: PlatformError.PlatformError): string => {
  const command = JSON.stringify(def.command)
  if (e._tag === "SystemError" && e.reason === "NotFound") {
    if (e.method !== "spawn" && def.cwd !== undefined) return `its working directory ${JSON.stringify(def.cwd)} does not exist`
    return def.command.includes("/")
      ? `command ${command} does not exist`
      : `command ${command} was not found on PATH; install it, or give its full path as the server's "command"`
  }
  if (e._tag === "SystemError" && e.reason === "PermissionDenied") return `command ${command} is not executable (permission denied)`
  return `cannot start ${def.command}: ${e.message}`
}

/**
 * Starts the upstream process and returns a connection to it. Closing the scope closes stdin,
 * waits `killGrace` for the process to leave, then SIGTERMs and finally SIGKILLs its process
 * group, so grandchildren (npx → node) go with it.
 */
export const openStdio = (
  def: StdioDefinition,
  options: StdioOptions = {}
): Effect.Effect<Connection, TransportError, Scope.Scope | CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const maxLineBytes = options.maxLineBytes ?? defaults.maxLineBytes
    const stderrTailBytes = options.stderrTailBytes ?? defaults.stderrTailBytes
    const killGrace = options.killGrace ?? defaults.killGrace

    let command = Command.make(def.command, ...def.args).pipe(
      Command.env(def.env),
      Command.stdin("pipe"),
      Command.stdout("pipe"),
      Command.stderr("pipe")
    )
    if (def.cwd !== undefined) command = Command.workingDirectory(command, def.cwd)

    const scope = yield* Effect.scope
    const proc = yield* Command.start(command).pipe(
      Effect.mapError((e) => new TransportClosed({ reason: spawnFailure(def, e) }))
    )

    const stderrTail = yield* Ref.make("")
    const closedWith = yield* Deferred.make<TransportClosed>()
    const waiting = Waiting.make()
    const { pending, progress } = waiting
    const unsolicited = yield* Queue.sliding<JsonRpc.Parsed>(1024)
    const outbox = yield* Mailbox.make<string>()

    // The reason once closed, kept beside the Deferred so that sending checks it in place.
    let closedReason: TransportClosed | undefined
    const close = (reason: TransportClosed) =>
      Effect.gen(function*() {
        if (!(yield* Deferred.succeed(closedWith, reason))) return
        closedReason = reason
        yield* waiting.failAll(reason)
        yield* Queue.shutdown(unsolicited)
        yield* outbox.end
      })

    // The writer owns stdin: one frame per line, in offer order, and every frame waiting when it
    // gets to run in one write (under load that is one pipe write for many calls, not one each).
    // Ending the outbox ends the stream, which ends stdin — the polite way to ask a stdio server
    // to leave.
    const encoder = new TextEncoder()
    yield* Mailbox.toStream(outbox).pipe(
      Stream.mapChunks((lines) => Chunk.of(encoder.encode(Chunk.join(lines, "")))),
      Stream.run(proc.stdin),
      Effect.catchAll((e) => Effect.logDebug(`stdin of ${def.name} closed: ${e.message}`)),
      Effect.forkIn(scope)
    )

    // Raw, for the log: what reaches hosts and /v1 callers is redacted at the gateway's edge.
    yield* proc.stderr.pipe(
      Stream.decodeText(),
      Stream.runForEach((text) =>
        Effect.zipRight(
          Ref.update(stderrTail, (tail) => (tail + text).slice(-stderrTailBytes)),
          Effect.logDebug(`${def.name} stderr: ${text.trimEnd()}`)
        )
      ),
      Effect.ignore,
      Effect.forkIn(scope)
    )

    const dispatch = (parsed: JsonRpc.Parsed): void => {
      if (!waiting.unsafeRoute(parsed)) Queue.unsafeOffer(unsolicited, parsed)
    }

    // Every line that has arrived is handled in one go, in one stage over the raw bytes: an answer
    // goes straight to its waiter.
    const splitter = makeLineSplitter(maxLineBytes)
    const readerDone = yield* proc.stdout.pipe(
      Stream.runForEachChunk((chunks): Effect.Effect<void, FrameTooLarge> => {
        let skipped: Array<string> | undefined
        for (const bytes of chunks) {
          const lines = splitter.push(bytes)
          if (lines instanceof FrameTooLarge) return Effect.fail(lines)
          for (const line of lines) {
            if (line.trim().length === 0) continue
            const frame = JsonRpc.decodeFrame(line)
            if (Either.isLeft(frame)) (skipped ??= []).push(line)
            else if (frame.right._tag === "Single") dispatch(frame.right.parsed)
            else for (const el of frame.right.elements) if (Either.isRight(el)) dispatch(el.right)
          }
        }
        return skipped === undefined
          ? Effect.void
          : Effect.forEach(skipped, (line) => Effect.logDebug(`skipped a non-JSON-RPC line from ${def.name}: ${line.slice(0, 200)}`), {
            discard: true
          })
      }),
      Effect.either,
      Effect.forkIn(scope)
    )

    // Whatever ends first — the process or its stdout — closes the connection for everyone
    // waiting, with the exit status and stderr tail so the caller can say why.
    yield* Effect.gen(function*() {
      const readEnd = yield* readerDone.await
      if (Exit.isSuccess(readEnd) && Either.isLeft(readEnd.value) && readEnd.value.left instanceof FrameTooLarge) {
        yield* close(
          new TransportClosed({ reason: `${def.name}: ${readEnd.value.left.message}`, stderrTail: yield* Ref.get(stderrTail) })
        )
        yield* proc.kill("SIGKILL").pipe(Effect.ignore)
        return
      }
      const code = yield* proc.exitCode.pipe(Effect.option)
      yield* close(
        new TransportClosed({
          reason: `${def.name} exited`,
          exitCode: Option.getOrNull(code),
          stderrTail: yield* Ref.get(stderrTail)
        })
      )
    }).pipe(Effect.forkIn(scope))

    // Finalizers run uninterruptibly, and a timeout cannot give up on an uninterruptible wait;
    // the kill sequence is made interruptible so each grace period really ends.
    yield* Scope.addFinalizer(
      scope,
      Effect.interruptible(Effect.gen(function*() {
        yield* outbox.end
        const gone = yield* proc.exitCode.pipe(Effect.timeout(killGrace), Effect.option)
        if (Option.isNone(gone)) {
          const termed = yield* proc.kill("SIGTERM").pipe(Effect.timeout(killGrace), Effect.option)
          if (Option.isNone(termed)) yield* proc.kill("SIGKILL").pipe(Effect.timeout(killGrace), Effect.ignore)
        }
        yield* close(new TransportClosed({ reason: `${def.name} was closed`, stderrTail: yield* Ref.get(stderrTail) }))
      })).pipe(Effect.ignore)
    )

    const send = (message: JsonRpc.Message) =>
      Effect.suspend(() => {
        if (closedReason !== undefined) return Effect.fail(closedReason)
        outbox.unsafeOffer(`${JsonRpc.encodeFrame(message)}\n`)
        return Effect.void
      })

    const register = (req: JsonRpc.Request) =>
      Effect.map(Mailbox.make<JsonRpc.Parsed, TransportError>(), (box: Waiting.Box) => {
        pending.set(Waiting.idKey(req.id), box)
        const token = Waiting.requestProgressKey(req.params)
        if (token !== undefined) progress.set(token, box)
        return box
      })

    const unregister = (req: JsonRpc.Request) =>
      Effect.suspend(() => {
        const token = Waiting.requestProgressKey(req.params)
        if (token !== undefined) progress.delete(token)
        // Still pending when the caller stops listening: the caller gave up, so tell the
        // server to stop too (stdio has no other cancellation signal).
        if (!pending.delete(Waiting.idKey(req.id))) return Effect.void
        return send(
          JsonRpc.notification("notifications/cancelled", { requestId: req.id, reason: "cancelled by the caller" })
        ).pipe(Effect.ignore)
      })

    const request: Connection["request"] = (req) =>
      Stream.unwrapScoped(
        Effect.gen(function*() {
          const box = yield* Effect.acquireRelease(register(req), () => unregister(req))
          yield* send(req)
          return Mailbox.toStream(box)
        })
      )

    // The same exchange as `request`, read straight off the box: a Stream per call costs
    // more than the rest of the round trip.
    const call: Connection["call"] = (req, onMessage) =>
      Effect.acquireUseRelease(
        register(req),
        (box) =>
          Effect.zipRight(
            send(req),
            Effect.gen(function*() {
              let response: JsonRpc.Response | undefined
              for (;;) {
                const [messages, done] = yield* box.takeAll
                for (const parsed of messages) {
                  if (JsonRpc.isResponse(parsed.message)) response = parsed.message
                  else yield* onMessage(parsed)
                }
                if (done) return response
              }
            })
          ),
        () => unregister(req)
      )

    return {
      request,
      call,
      notify: (n) => send(n),
      respond: (r) => send(r),
      unsolicited: Stream.fromQueue(unsolicited),
      closed: Deferred.await(closedWith),
      stderrTail: Ref.get(stderrTail),
      openNotificationStream: Effect.void,
      wire: "stdio"
    } satisfies Connection
  })

/** How long `killGrace` defaults to, for callers that report it. */
export const defaultKillGrace: Duration.Duration = Duration.decode(defaults.killGrace)
