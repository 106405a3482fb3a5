/**
 * One call's box on a shared channel (a stdio process's stdout), waited on by the caller's own
 * fiber without a Mailbox. A Mailbox per call, with the acquire/use/release and the loop around
 * it, was about forty Effect operations of a call's three hundred (docs/performance.md); here the
 * common call is one wait that the reader ends with the response.
 *
 * The box lets go of its call exactly once, whichever comes first: its end (the response routed,
 * the connection failing every call, a cut in place) or its caller leaving while it waits. The
 * transport's `release` runs then, in place, so nothing depends on the caller's fiber getting to
 * run again: an interruption that lands just after the answer cannot leave the call registered.
 */
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { TransportError } from "../Transport.js"
import type { Box } from "./Waiting.js"

/** What a wait on the box hands back: the messages so far, and its end once it has one. */
interface Taken {
  readonly messages: ReadonlyArray<JsonRpc.Parsed>
  readonly ended: Exit.Exit<void, TransportError> | undefined
}

const empty: ReadonlyArray<JsonRpc.Parsed> = []

/**
 * The most messages a box holds before its caller takes them. A caller that cannot pass them on
 * (a stdio host that stopped reading its stdout) would otherwise have every log line an upstream
 * writes kept for it; past the bound its notifications are dropped and counted, never a response
 * or a question.
 */
export const MaxQueued = 4096

export class CallBox implements Box {
  private queued: Array<JsonRpc.Parsed> = []
  private ended: Exit.Exit<void, TransportError> | undefined
  private wake: (() => void) | undefined
  private released = false
  private dropped = 0

  /**
   * `release` is told once, when the box ends or is abandoned. `abandonedByCall` when what runs
   * the call lets go of it once the call is over: a call in place abandons its box then
   * (`WaitingCall.onEnd`), and an HTTP reply's box releases nothing, its POST being released by
   * its sender. A wait on such a box needs no canceller of its own, which is an uninterruptible
   * stretch of Effect operations around every wait.
   */
  constructor(private readonly release: () => void, private readonly abandonedByCall = false) {}

  unsafeOffer(parsed: JsonRpc.Parsed): boolean {
    if (this.ended !== undefined) return false
    if (this.queued.length >= MaxQueued && JsonRpc.isNotification(parsed.message)) {
      this.dropped++
      return true
    }
    this.queued.push(parsed)
    this.poke()
    return true
  }

  unsafeDone(exit: Exit.Exit<void, TransportError>): boolean {
    if (this.ended !== undefined) return false
    this.ended = exit
    this.letGo()
    this.poke()
    return true
  }

  /** The caller no longer waits: the call is let go of (and cancelled upstream, if still pending). */
  abandon(): void {
    this.letGo()
  }

  private letGo(): void {
    if (this.released) return
    this.released = true
    this.release()
  }

  private poke(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  private drain(): Taken {
    const messages = this.queued.length === 0 ? empty : this.queued
    if (messages !== empty) this.queued = []
    return { messages, ended: this.ended }
  }

  /**
   * Waits for the call's response, handing every other message tied to it to `onMessage` in
   * order. Undefined when the box ended without a response; the box's failure otherwise.
   */
  response(onMessage: (parsed: JsonRpc.Parsed) => Effect.Effect<void>): Effect.Effect<JsonRpc.Response | undefined, TransportError> {
    const step = (taken: Taken): Effect.Effect<JsonRpc.Response | undefined, TransportError> => {
      let response: JsonRpc.Response | undefined
      let others: Array<JsonRpc.Parsed> | undefined
      for (const parsed of taken.messages) {
        if (JsonRpc.isResponse(parsed.message)) response = parsed.message
        else (others ??= []).push(parsed)
      }
      const next = response !== undefined
        ? this.dropped === 0
          ? Effect.succeed(response)
          : Effect.as(
            Effect.logWarning(`${this.dropped} notifications of a call were dropped: its caller was not taking them (more than ${MaxQueued} waited)`),
            response
          )
        : taken.ended !== undefined
        ? Exit.isSuccess(taken.ended) ? Effect.succeed(undefined) : Effect.failCause(taken.ended.cause)
        : Effect.flatMap(this.take, step)
      if (others === undefined) return next
      // Rare: progress or a log message first. Leaving while it is handed on lets go of the call too.
      return Effect.zipRight(Effect.forEach(others, onMessage, { discard: true }), next).pipe(
        Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => this.abandon())))
      )
    }
    return Effect.flatMap(this.take, step)
  }

  private readonly take: Effect.Effect<Taken> = Effect.suspend(() => {
    if (this.queued.length > 0 || this.ended !== undefined) return Effect.succeed(this.drain())
    return Effect.async<Taken>((resume) => {
      // Taken when woken, not when the fiber next runs: what arrives in between waits for the
      // next take, which finds it at once. An `Effect.sync` and its closure per wake were garbage.
      this.wake = () => resume(Effect.succeed(this.drain()))
      // Interrupted without a canceller, the wait ends at once; a later wake resumes nothing.
      if (this.abandonedByCall) return
      return Effect.sync(() => {
        this.wake = undefined
        this.abandon()
      })
    })
  })
}
