/**
 * The stdio transport: the upstream is a child process speaking newline-delimited JSON-RPC on
 * stdin/stdout. Lines that are not JSON (banners some servers print) are skipped and logged;
 * stderr is kept as a bounded tail for error messages; a line over the size cap closes the
 * connection rather than growing memory without bound.
 *
 * The process runs in a process group of its own (it leads it), and stopping it stops the whole
 * group: whatever it started goes too, even when it has itself already left (a `sh -c` whose
 * grandchild ignores SIGTERM). With `ProcessGroups`, each group is recorded while it lives, so a
 * daemon that is killed outright can have its leftovers stopped by the next one.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import type * as Context from "effect/Context"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ProcessGroups } from "../os/ProcessGroups.js"
import * as ProcessTable from "../os/ProcessTable.js"
import type { StdioDefinition } from "../ServerDefinition.js"
import { type Connection, FrameTooLarge, type RequestHints, TransportClosed, type TransportError } from "./Transport.js"
import { makeLineSplitter } from "./internal/lines.js"
import { CallBox } from "./internal/CallBox.js"
import { type Child, reapDetached, spawnChild, type SpawnError } from "./internal/StdioChild.js"
import { CutInPlace, inPlaceIn } from "./internal/InPlace.js"
import * as Waiting from "./internal/Waiting.js"

/** Tunables of the stdio transport. */
export interface StdioOptions {
  /** The largest stdout line accepted, in characters. */
  readonly maxLineBytes?: number
  /** How much of stderr to keep for error messages. */
  readonly stderrTailBytes?: number
  /** How long to wait after closing stdin, and again after SIGTERM, before the next step. */
  readonly killGrace?: Duration.DurationInput
  /** Where started process groups are recorded, if anywhere. */
  readonly groups?: Context.Tag.Service<ProcessGroups>
  /**
   * Names of this process's environment a server does not inherit: the daemon's own secrets
   * (`MCPX_DAEMON_TOKEN`), which would let any upstream call every other server through the daemon.
   * A server's configured `env` may still set one of them on purpose.
   */
  readonly withheldEnv?: ReadonlyArray<string>
  /**
   * Whether a stop now is the process's own exit (a one-shot command's end, the daemon's last
   * step): stdin is closed as always, but a server still running a moment later is handed to a
   * detached reaper (the same grace, SIGTERM, grace, SIGKILL) instead of being waited for, so the
   * command exits once its answer is out. A server that stays up after EOF cost every `mcpx-fx
   * tools` and `mcpx-fx stop` its whole kill grace.
   */
  readonly handOff?: () => boolean
  /**
   * `upstream.stdinBuffer`: how much may wait to reach a server's stdin (in characters, default
   * 16 Mi). A server that reads slower than it is sent to would otherwise have every request of a
   * fast host queued in memory in front of it; past the bound a new request is answered at once
   * with an error naming the server and the setting, and the others go on.
   */
  readonly maxStdinBytes?: number
}

/**
 * Whether some process of group `pgid` is still running (a zombie runs nothing). The signal-0 probe
 * answers the usual case, an empty group, at once; only a group that still answers it is looked
 * up in `/proc`, whose scan reads every process's stat (1.3 ms for 64 processes, more on a busy
 * desktop) at every stop and every poll.
 */
const groupRunning = (pgid: number): boolean => ProcessTable.groupAlive(pgid) && (!ProcessTable.available() || ProcessTable.membersOf(pgid).length > 0)

/**
 * Waits up to `limit` for group `pgid` to be gone; true once it is. Other processes' deaths send
 * this one no event (only the leader's does), so it is polled, briefly and boundedly.
 */
const groupGone = (pgid: number, limit: Duration.DurationInput): Effect.Effect<boolean> =>
  Effect.suspend(() => (groupRunning(pgid) ? Effect.fail("running" as const) : Effect.succeed(true))).pipe(
    Effect.retry(Schedule.spaced(Duration.millis(25)).pipe(Schedule.upTo(limit))),
    Effect.orElseSucceed(() => false)
  )

/** How long a one-shot command's stop waits for a server to leave at EOF before handing it off. */
const HandOffAfter = Duration.millis(100)

/** How many messages a server sends on its own (its requests, its notifications) may wait to be handled. */
export const UnsolicitedBacklog = 1024

const defaults = { maxLineBytes: 16 * 1024 * 1024, stderrTailBytes: 8 * 1024, killGrace: "2 seconds", maxStdinBytes: 16 * 1024 * 1024 } as const

/**
 * Why the process could not be started, in the words of the config that named it: a command that
 * is not there is the commonest first-run mistake, and the system's own message (`spawn … ENOENT`)
 * does not say what to do about it.
 */
export const spawnFailure = (def: StdioDefinition, e: SpawnError): string => {
  const command = JSON.stringify(def.command)
  if (e.step === "cwd") return `its working directory ${JSON.stringify(def.cwd)} does not exist`
  if (e.code === "ENOENT") {
    return def.command.includes("/")
      ? `command ${command} does not exist`
      : `command ${command} was not found on PATH; install it, or give its full path as the server's "command"`
  }
  if (e.code === "EACCES") return `command ${command} is not executable (permission denied)`
  return `cannot start ${def.command}: ${e.message}`
}

/**
 * Starts the upstream process and returns a connection to it. Closing the scope closes stdin and
 * waits `killGrace` for the process to leave; then, if anything of its process group is still
 * running (the process itself, or what it started: npx → node), SIGTERMs the group, waits
 * `killGrace` again, and SIGKILLs whatever of it is left.
 */
export const openStdio = (
  def: StdioDefinition,
  options: StdioOptions = {}
): Effect.Effect<Connection, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    const maxLineBytes = options.maxLineBytes ?? defaults.maxLineBytes
    const stderrTailBytes = options.stderrTailBytes ?? defaults.stderrTailBytes
    const killGrace = options.killGrace ?? defaults.killGrace
    const maxStdinBytes = options.maxStdinBytes ?? defaults.maxStdinBytes

    const groups = options.groups
    const scope = yield* Effect.scope
    const fork = Runtime.runFork(yield* Effect.runtime<never>())
    // What the node streams' handlers have to say goes to the log from outside any fiber.
    const log = (message: string) => void fork(Effect.logDebug(message))
    let stderrTail = ""
    const closedWith = yield* Deferred.make<TransportClosed>()
    const waiting = Waiting.make()
    const { callers, pending, progress } = waiting
    const unsolicited = yield* Queue.dropping<JsonRpc.Parsed>(UnsolicitedBacklog)
    let overflowed = 0
    // How the reading of stdout ended: at its end, or at a line past the size cap.
    const readerDone = yield* Deferred.make<FrameTooLarge | undefined>()

    // The reason once closed, kept beside the Deferred so that sending checks it in place.
    let closedReason: TransportClosed | undefined
    let proc: Child | undefined
    const close = (reason: TransportClosed) =>
      Effect.gen(function*() {
        if (!(yield* Deferred.succeed(closedWith, reason))) return
        closedReason = reason
        yield* waiting.failAll(reason)
        yield* Queue.shutdown(unsolicited)
        proc?.endStdin()
      })

    const dispatch = (parsed: JsonRpc.Parsed): void => {
      if (waiting.unsafeRoute(parsed) || Queue.unsafeOffer(unsolicited, parsed)) return
      // Nobody is taking what the server says on its own as fast as it says it: past the backlog
      // its requests are refused (never left unanswered) and its notifications dropped, counted in
      // the log at the first and every thousandth.
      if (overflowed++ % 1000 === 0) {
        fork(Effect.logWarning(
          `${def.name} sends messages of its own faster than they are handled: ${overflowed} past the ${UnsolicitedBacklog} waiting ` +
            "were refused (requests) or dropped (notifications)"
        ))
      }
      const m = parsed.message
      if (JsonRpc.isRequest(m)) {
        proc?.write(
          `${
            JsonRpc.encodeFrame(
              JsonRpc.failure(m.id, ErrorCode.InternalError, `mcpx-fx is busy: ${UnsolicitedBacklog} messages from this server wait to be handled`)
            )
          }\n`
        )
      }
    }

    // Every line that has arrived is handled in one go, in place, over the raw bytes: an answer
    // goes straight to its waiter.
    const splitter = makeLineSplitter(maxLineBytes)
    let heardAt = Date.now()
    const onStdout = (bytes: Buffer) => {
      heardAt = Date.now()
      const lines = splitter.push(bytes)
      if (lines instanceof FrameTooLarge) {
        proc?.stopReading()
        Deferred.unsafeDone(readerDone, Effect.succeed(lines))
        return
      }
      for (const line of lines) {
        if (line.trim().length === 0) continue
        const frame = JsonRpc.decodeUpstreamFrame(line)
        if (Either.isLeft(frame)) log(`skipped a non-JSON-RPC line from ${def.name}: ${line.slice(0, 200)}`)
        else if (frame.right._tag === "Single") dispatch(frame.right.parsed)
        else for (const el of frame.right.elements) if (Either.isRight(el)) dispatch(el.right)
      }
    }

    proc = yield* spawnChild(def.command, def.args, {
      env: { ...def.env, ...groups?.environment },
      withheld: options.withheldEnv ?? [],
      cwd: def.cwd,
      killGrace
    }, {
      onStdout,
      onStdoutEnd: () => Deferred.unsafeDone(readerDone, Effect.succeed(undefined)),
      // Raw, for the log: what reaches hosts and /v1 callers is redacted at the gateway's edge.
      onStderr: (text) => {
        stderrTail = (stderrTail + text).slice(-stderrTailBytes)
        log(`${def.name} stderr: ${text.trimEnd()}`)
      },
      onStdinError: (e) => log(`stdin of ${def.name} closed: ${e.message}`)
    }).pipe(Effect.mapError((e) => new TransportClosed({ reason: spawnFailure(def, e) })))
    const child = proc
    // It leads a process group whose id is its pid.
    const pgid: number = child.pid
    if (groups !== undefined) yield* groups.started(pgid, [def.command, ...def.args].join(" "))

    // Whatever ends first — the process or its stdout — closes the connection for everyone
    // waiting, with the exit status and stderr tail so the caller can say why.
    yield* Effect.gen(function*() {
      const tooLarge = yield* Deferred.await(readerDone)
      if (tooLarge !== undefined) {
        yield* close(new TransportClosed({ reason: `${def.name}: ${tooLarge.message}`, stderrTail }))
        yield* child.kill("SIGKILL").pipe(Effect.timeout(killGrace), Effect.ignore)
        return
      }
      const code = yield* child.exitCode
      yield* close(new TransportClosed({ reason: `${def.name} exited`, exitCode: code, stderrTail }))
    }).pipe(Effect.forkIn(scope))

    // The group, not the process: once the leader has left (or was told to), what it started may
    // still run, and nothing else would ever stop it.
    const signalGroup = (signal: NodeJS.Signals) =>
      Effect.suspend(() => (ProcessTable.signalGroup(pgid, signal) ? Effect.void : Effect.ignore(Effect.timeout(child.kill(signal), killGrace))))
    const stop = Effect.gen(function*() {
      child.endStdin()
      if (options.handOff?.() === true) {
        // Most servers leave at EOF within a few milliseconds; one that does not is not waited for.
        yield* child.exitCode.pipe(Effect.timeout(HandOffAfter), Effect.ignore)
        if (groupRunning(pgid)) {
          reapDetached(pgid, Duration.toMillis(Duration.decode(killGrace)))
          child.release()
        }
        yield* close(new TransportClosed({ reason: `${def.name} was closed`, stderrTail }))
        return
      }
      yield* child.exitCode.pipe(Effect.timeout(killGrace), Effect.ignore)
      if (groupRunning(pgid)) {
        yield* signalGroup("SIGTERM")
        if (!(yield* groupGone(pgid, killGrace))) {
          yield* signalGroup("SIGKILL")
          yield* groupGone(pgid, killGrace)
        }
      }
      yield* child.exitCode.pipe(Effect.timeout(killGrace), Effect.ignore)
      yield* close(new TransportClosed({ reason: `${def.name} was closed`, stderrTail }))
      if (groups !== undefined) yield* groups.stopped(pgid)
    })
    // Finalizers run uninterruptibly, and a timeout cannot give up on an uninterruptible wait; nor
    // may the closing fiber just turn interruptible, since it may be the one being interrupted
    // (a signal to the process), which would skip the sequence altogether. So it runs in a fiber
    // of its own, each grace period bounded, and the scope waits for it.
    yield* Scope.addFinalizer(scope, Effect.flatMap(Effect.forkDaemon(Effect.interruptible(stop)), Fiber.join))

    // Queued for stdin in place; false once the connection is closed.
    const unsafeSend = (message: JsonRpc.Message): boolean => {
      if (closedReason !== undefined) return false
      child.write(`${JsonRpc.encodeFrame(message)}\n`)
      return true
    }

    const send = (message: JsonRpc.Message) => Effect.suspend(() => (unsafeSend(message) ? Effect.void : Effect.fail(closedReason!)))

    // A request that would join a stdin backlog past its bound is answered here instead. Only
    // requests are held to it: cancellations and answers to the server's own questions are small,
    // and it needs them to finish what is already queued.
    const backedUp = (req: JsonRpc.Request): JsonRpc.Response | undefined => {
      const waiting = child.pending()
      if (waiting < maxStdinBytes) return undefined
      return JsonRpc.failure(
        req.id,
        ErrorCode.InternalError,
        `${def.name} is not reading its stdin fast enough: ${waiting} characters already wait to reach it ` +
          `(upstream.stdinBuffer is ${maxStdinBytes}); try again once it catches up`
      )
    }

    // Still pending when the caller stops listening: the caller gave up, so tell the server to
    // stop too (stdio has no other cancellation signal). Except initialize, which clients must not
    // cancel.
    const forget = (req: JsonRpc.Request, token: Waiting.Key | undefined) => {
      if (token !== undefined) progress.delete(token)
      callers.delete(Waiting.idKey(req.id))
      if (!pending.delete(Waiting.idKey(req.id)) || req.method === Method.Initialize) return
      unsafeSend(JsonRpc.notification(Method.NotificationsCancelled, { requestId: req.id, reason: "cancelled by the caller" }))
    }

    // The request waits on `box` for its answer (by id) and its progress (by token); answers the token.
    const track = (req: JsonRpc.Request, box: Waiting.Box, hints: RequestHints | undefined): Waiting.Key | undefined => {
      pending.set(Waiting.idKey(req.id), box)
      if (hints?.caller !== undefined) callers.set(Waiting.idKey(req.id), hints.caller)
      const token = Waiting.requestProgressKey(req.params)
      if (token !== undefined) progress.set(token, box)
      return token
    }

    const request: Connection["request"] = (req, hints) =>
      Stream.unwrapScoped(
        Effect.gen(function*() {
          const refused = backedUp(req)
          if (refused !== undefined) {
            const frame = JsonRpc.decodeFrameValue(refused)
            return Either.isRight(frame) && frame.right._tag === "Single" ? Stream.make(frame.right.parsed) : Stream.empty
          }
          const box = yield* Mailbox.make<JsonRpc.Parsed, TransportError>()
          yield* Effect.acquireRelease(Effect.sync(() => track(req, box, hints)), (token) => Effect.sync(() => forget(req, token)))
          yield* send(req)
          return Mailbox.toStream(box)
        })
      )

    // The same exchange as `request`, waited on in the caller's fiber (internal/CallBox.ts): a
    // Stream per call costs more than the rest of the round trip. A call running in place
    // (internal/InPlace.ts) is cut short by ending its box (an answer that arrived first stands),
    // and lets go of it once over, however it ended.
    const call: Connection["call"] = (req, onMessage, hints) =>
      Effect.withFiberRuntime<JsonRpc.Response | undefined, TransportError>((fiber) => {
        const inPlace = inPlaceIn(fiber)
        if (inPlace?.isCut === true) return Effect.die(new CutInPlace())
        if (closedReason !== undefined) return Effect.fail(closedReason)
        const refused = backedUp(req)
        if (refused !== undefined) return Effect.succeed(refused)
        let letGo: (() => void) | undefined
        let token: Waiting.Key | undefined
        const box = new CallBox(() => {
          letGo?.()
          forget(req, token)
        }, inPlace !== undefined)
        token = track(req, box, hints)
        unsafeSend(req)
        if (inPlace !== undefined) {
          letGo = inPlace.waitingOn(() => box.unsafeDone(Exit.die(new CutInPlace())))
          inPlace.onEnd(() => box.abandon())
        }
        return box.response(onMessage)
      })

    return {
      request,
      call,
      notify: (n) => send(n),
      respond: (r) => send(r),
      unsolicited: Stream.fromQueue(unsolicited),
      closed: Deferred.await(closedWith),
      stderrTail: Effect.sync(() => stderrTail),
      heardAt: () => heardAt,
      openNotificationStream: Effect.void,
      wire: "stdio",
      cutsInPlace: true
    } satisfies Connection
  })

/** How long `killGrace` defaults to, for callers that report it. */
export const defaultKillGrace: Duration.Duration = Duration.decode(defaults.killGrace)
