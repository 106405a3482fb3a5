/**
 * The call that needs no fiber of its own: one whose key's instance in the server's own lane is up
 * and serving a legacy session over stdio or Streamable HTTP (nearly every call to most servers),
 * or a modern stdio or Streamable HTTP session that returns `input_required` to its caller (a
 * modern host's call).
 * Such a call only waits for its answer (on stdout, or on its POST's exchange), so it runs in its
 * caller's fiber (internal/InPlace.ts) and is cut short by ending that wait; every other call runs
 * under `Abortable`, which can interrupt it wherever it waits (a start, a question between rounds,
 * a task's polls). A call in place that fails on a session whose era came into doubt is
 * tried once more on the general path, as that path itself would.
 *
 * What the caller sees is the same either way: the crash, stop, deadline or shutdown that ends
 * the call is its error, the upstream request is cancelled, and an answer that came first stands.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Abort, AbortHook } from "@mcpx-fx/cancel/Abortable"
import type { PoolError } from "../PoolEvents.js"
import { type Caller, type PoolServer, requestedLane, type ScopeKey } from "../PoolModel.js"
import type { Session } from "../../session/SessionModel.js"
import { CutInPlace, enter, InPlaceCall, leave } from "../../transport/internal/InPlace.js"
import type { makeLeases } from "./PoolLeases.js"
import type { Instance, Key, LaneState, ServerPool } from "./PoolState.js"

/** A serving instance a call can be run on in place. */
export interface InPlaceTarget {
  readonly pool: ServerPool
  readonly lane: LaneState
  readonly inst: Instance
  readonly session: Session
}

/** What the in-place path needs of the Pool. */
export interface InPlaceEnv {
  readonly poolNamed: (server: PoolServer) => ServerPool | undefined
  readonly keyFor: (scope: ScopeKey) => Key
  readonly leases: ReturnType<typeof makeLeases>
}

export const makeInPlace = (env: InPlaceEnv) => {
  /**
   * Where `caller`'s call would be leased in place by the Pool's own routing (the server's own
   * lane, its key's instance serving), when that session runs the call in place (`runsInPlace`
   * of it; by default `session.runsInPlace`, a legacy stdio or Streamable HTTP session); otherwise undefined.
   */
  const target = (server: PoolServer, caller: Caller, runsInPlace?: (session: Session) => boolean): InPlaceTarget | undefined => {
    if (caller.key.kind === "call" || requestedLane(server.probe.preference, caller.revision) !== "modern") return undefined
    const pool = env.poolNamed(server)
    if (pool === undefined) return undefined
    const inst = pool.modern.instances.get(env.keyFor(caller.key).id)
    const session = inst?.serving?.session
    if (inst === undefined || session === undefined) return undefined
    if (!(runsInPlace === undefined ? session.runsInPlace : runsInPlace(session))) return undefined
    return { pool, lane: pool.modern, inst, session }
  }

  /**
   * Runs `use` on the target's session in this fiber; `register` is handed the call's abort as it
   * begins and answers how to let go of it.
   *
   * The lease, the in-place mark and the abort are taken and let go of in one uninterruptible
   * stretch around `use`, in the order the general path keeps (the session's TransportClosed
   * noted as a crash before the lease goes back): the combinators that path is built from were
   * about fifty Effect operations of a call's two hundred and fifty.
   */
  const run = <A, E, R, E2>(
    here: InPlaceTarget,
    use: (session: Session) => Effect.Effect<A, E, R>,
    register: AbortHook<E2 | PoolError>,
    retry: () => Effect.Effect<A, E | E2 | PoolError, R>
  ): Effect.Effect<A, E | E2 | PoolError, R> =>
    // The fiber is read once, for its clock and for the in-place mark: one step, not two.
    Effect.withFiberRuntime((fiber) => {
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      return Effect.uninterruptibleMask((restore) => {
        const { inst, lane, pool, session } = here
        const call = new InPlaceCall<E2 | PoolError>()
        const letGo = register(call.abort)
        const abort: Abort<PoolError> = call.abort
        env.leases.takeLease(inst, clock.unsafeCurrentTimeMillis())
        const gone = inst.gone
        const leaveUsers = gone === undefined ? inst.users.add(abort) : undefined
        const work: Effect.Effect<A, E | PoolError, R> = gone === undefined ? restore(use(session)) : Effect.fail(gone)
        const outer = enter(fiber, call)
        const over = () => {
          leaveUsers?.()
          call.finish()
          letGo()
          leave(fiber, outer)
        }
        return Effect.matchCauseEffect(work, {
          onSuccess: (value) => {
            over()
            const then = env.leases.releaseAt(pool, lane, inst, clock.unsafeCurrentTimeMillis())
            return then === undefined ? Effect.succeed(value) : Effect.as(then, value)
          },
          onFailure: (cause): Effect.Effect<A, E | E2 | PoolError, R> => {
            over()
            // A success gives the lease back in place (above); a failure's paths, as an effect.
            const released = env.leases.release(pool, lane, inst)
            // A cut ends the wait with CutInPlace; what the caller sees is the cut's own error.
            const defect = Cause.dieOption(cause)
            const cut = call.error
            if (Option.isSome(defect) && defect.value instanceof CutInPlace && cut !== undefined) {
              return Effect.zipRight(released, Effect.fail(cut.error))
            }
            const failure = Cause.failureOrCause(cause)
            const failed = Either.isLeft(failure)
              ? Effect.onExit(env.leases.failedUse(pool, lane, inst, failure.left), () => released)
              : Effect.zipRight(released, Effect.failCause(failure.right))
            // A session whose era came into doubt (an HTTP server that changed era under us)
            // goes, and the call is tried once more where the general path would: on a fresh probe.
            return Effect.flatMap(session.eraDoubt, (doubt) =>
              Option.isNone(doubt)
                ? failed
                : Effect.zipRight(Effect.ignore(failed), Effect.zipRight(env.leases.doubted(pool, lane, inst, doubt.value), restore(retry()))))
          }
        })
      })
    })

  return { target, run }
}
