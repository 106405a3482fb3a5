/**
 * One start in progress, shared by the stdio and HTTP executors: its report of steps, the opening
 * exchanges, connections opened in their own scopes, and `finish`, which writes what was learned to
 * the era cache and makes the session and the report.
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { EraCache, EraObservation, EraRecord } from "../EraCache.js"
import type { Negotiator } from "../Negotiator.js"
import type { Plan } from "../ProbePlan.js"
import type { LateEra, ProbeError, ProbeOptions, ProbeReport, Started } from "../ProbeModel.js"
import { ProbeFailed } from "../ProbeModel.js"
import type { ServerDefinition } from "../../ServerDefinition.js"
import { makeSession } from "../../session/Session.js"
import type { EraSource, Established } from "../../session/SessionModel.js"
import { RefusedAgain } from "../../session/SessionErrors.js"
import { type Connection, type Transport, TransportClosed } from "../../transport/Transport.js"
import { makeExchanges, type Outcome } from "./ProbeExchanges.js"

/** A connection and the scope that closes it. */
export interface Opening {
  readonly conn: Connection
  readonly scope: Scope.CloseableScope
}

/** The services a start uses. */
export interface RunServices {
  readonly transport: Context.Tag.Service<Transport>
  readonly cache: Context.Tag.Service<EraCache>
  readonly negotiator: Context.Tag.Service<Negotiator>
  readonly tracing: boolean
}

/** Everything an executor needs to carry out a plan. */
export type Run = Effect.Effect.Success<ReturnType<typeof makeRun>>

/** A start of `def`; `cached` is what the cache held when the start began (for the report). */
export const makeRun = (
  def: ServerDefinition,
  options: ProbeOptions,
  services: RunServices,
  plan: Plan,
  cached: Option.Option<EraRecord>,
  began: number
) =>
  Effect.gen(function*() {
    const { cache, negotiator, transport } = services
    const steps: Array<string> = []
    const note = (text: string) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        steps.push(`+${now - began}ms ${text}`)
      })
    const fail = (reason: string) => new ProbeFailed({ server: def.name, preference: options.preference, reason, steps: [...steps] })
    const parent = yield* Effect.scope
    const { discover, initialize } = makeExchanges({ note, fail, session: options.session })

    /** A connection in a scope of its own, so an attempt's connection can be closed before the next. */
    const open = (wire?: "http+sse") =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
        const conn = yield* transport.open(def, wire === undefined ? {} : { wire }).pipe(Scope.extend(scope))
        return { conn, scope } satisfies Opening
      })

    /** What the cache learns; `exclusive`: the other era's opening request was refused or never answered. */
    const observe = (conn: Connection, established: Omit<Established, "eraSource">, exclusive: boolean): EraObservation =>
      ({
        era: established.era,
        version: established.negotiated,
        ...(conn.wire === "stdio" ? {} : { transport: conn.wire }),
        ...(exclusive ? { exclusive } : {})
      }) as EraObservation

    // Only a legacy HTTP session can be forgotten by its server; it is opened again the same way.
    const reinitializeOn = (conn: Connection) =>
      Effect.flatMap(negotiator.begin, (n) => initialize(conn, n)).pipe(
        Effect.flatMap((opened) =>
          opened._tag === "Legacy"
            ? Effect.void
            : Effect.fail(new RefusedAgain({ reason: `${def.name} refused to initialize again: ${opened.why}` }))
        ),
        Effect.catchTags({
          ProbeFailed: (e) => Effect.fail(new TransportClosed({ reason: `${def.name} could not initialize again: ${e.message}` })),
          DisjointVersionsError: (e) => Effect.fail(new RefusedAgain({ reason: `${def.name}: ${e.message}` })),
          VersionsExhaustedError: (e) => Effect.fail(new RefusedAgain({ reason: `${def.name}: ${e.message}` })),
          UnacceptableVersionError: (e) => Effect.fail(new RefusedAgain({ reason: `${def.name}: ${e.message}` }))
        })
      )

    /**
     * Makes the session. `record` is what the cache learns (nothing: leave it as it is); it can
     * differ from the session's own era when a dual server's process was initialized. `pending` is
     * a discover that may still answer modern, in which case the cache is rewritten then.
     */
    const finish = (
      at: Opening,
      established: Omit<Established, "eraSource">,
      eraSource: EraSource,
      record: EraObservation | undefined,
      pending?: Fiber.Fiber<Outcome, ProbeError>
    ): Effect.Effect<Started, ProbeError, Scope.Scope> =>
      Effect.gen(function*() {
        const { conn } = at
        const recordedEra = record?.era ?? established.era
        const stale = Option.isSome(plan.consulted) && plan.consulted.value.era !== recordedEra
        if (stale) yield* note(`the cached era was wrong: rewriting the cache`)
        const written = record !== undefined && plan.writes ? Option.some(yield* cache.set(def, record)) : Option.none()
        if (Option.isNone(written) && stale) yield* cache.invalidate(def)
        const lateEra = yield* Deferred.make<LateEra>()
        if (pending !== undefined && Option.isSome(written)) {
          yield* Fiber.join(pending).pipe(
            Effect.flatMap((outcome) =>
              outcome._tag !== "Modern" ? Effect.void : Effect.gen(function*() {
                const found = yield* cache.set(def, observe(conn, outcome.established, false))
                yield* Effect.logInfo(`${def.name}: its discover answered after initialize; the server is recorded modern`)
                yield* Deferred.succeed(lateEra, { cached: written.value, found })
              })
            ),
            Effect.ignore,
            Effect.forkIn(at.scope)
          )
        }
        const reinitialize = established.era === "legacy" && conn.wire !== "stdio" ? reinitializeOn(conn) : undefined
        const traced = services.tracing ? { url: def.transport === "http" ? def.url : undefined, lane: options.lane } : undefined
        const session = yield* makeSession(def.name, conn, { ...established, eraSource }, options.session, reinitialize, traced)
        const now = yield* Clock.currentTimeMillis
        const report: ProbeReport = {
          server: def.name,
          preference: options.preference,
          era: established.era,
          negotiated: established.negotiated,
          eraSource,
          wire: conn.wire,
          durationMs: now - began,
          steps: [...steps],
          cached,
          stale
        }
        return { session, report, lateEra: Deferred.await(lateEra) } satisfies Started
      })

    return { def, options, plan, negotiator, note, fail, discover, initialize, open, observe, finish }
  })
