/**
 * Upstream calls kept alive behind an `input_required`: a legacy upstream's questions for a caller
 * that cannot be asked on a channel (a 2026-07-28 host, `/v1/ask`, the CLI).
 *
 * A call begins here and runs in a fiber of the registry's own. When its upstream asks, the
 * question is kept under a key the registry mints and the caller's request ends with the questions
 * asked so far and a handle naming the call and the round; the upstream call keeps waiting for the
 * answers. The caller's next request brings the handle and the answers, which are delivered to the
 * waiting upstream requests, and it ends at the upstream's next move: its result, or more questions.
 *
 * Every pending call is bounded: in number (`questions.maxPending`), in rounds
 * (`questions.maxRounds`) and in how long it waits for its caller (`questions.ttl`); past any of
 * these it is ended, its questions answered on the caller's behalf (an elicitation cancelled,
 * anything else refused) and the upstream request cancelled. A caller that walks away mid-round
 * ends it too, so nothing keeps running for nobody — unless it asked to come back later
 * (`wait`, the `/v1/ask` long poll), when the call stays registered for it.
 *
 * The handle carries this instance's id, so a registry shared by several instances (a layer other
 * than this in-memory one) can route a retry to the one holding the call.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { make } from "./internal/PendingRegistry.js"
import type { Bounds, PendingCallsService } from "./PendingQuestions.js"
import { perGeneration } from "./internal/PerGeneration.js"
import { Settings } from "@mcpx-fx/config/Settings"

/** The in-memory registry under the `questions.*` settings, its handles naming `instance` (else a random id). */
export const makeIn = (instance: string | undefined): Effect.Effect<PendingCallsService, never, Settings | Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* Settings
    const read = Effect.all({
      ttl: settings.get("questions.ttl"),
      maxRounds: settings.get("questions.maxRounds"),
      maxPending: settings.get("questions.maxPending"),
      maxQuestions: settings.get("questions.maxQuestions"),
      gather: settings.get("questions.gather")
    })
    // Five reads per call, done again only once the settings' generation moves.
    return yield* make(perGeneration(settings.generation, read).get, instance)
  })

/** The registry of pending calls and held questions. */
export class PendingCalls extends Context.Tag("@mcpx-fx/gateway/PendingCalls")<PendingCalls, PendingCallsService>() {
  /** In memory, bounded by the `questions.*` settings (read when each call begins). */
  static readonly layer: Layer.Layer<PendingCalls, never, Settings> = Layer.scoped(PendingCalls, makeIn(undefined))

  /** As `layer`, its handles naming `instance` (a fleet's process id). */
  static readonly layerAs = (instance: string): Layer.Layer<PendingCalls, never, Settings> => Layer.scoped(PendingCalls, makeIn(instance))

  /** In memory with fixed bounds (tests, embedding). */
  static readonly layerWith = (bounds: Bounds): Layer.Layer<PendingCalls> => Layer.scoped(PendingCalls, make(Effect.succeed(bounds)))
}
