/**
 * Settings read on a hot path, read again only once the settings' generation moves (a runtime
 * change or a reload) rather than on every call.
 */
import * as Effect from "effect/Effect"

/** A value worked out from the settings, kept for as long as they stand. */
export interface PerGeneration<A> {
  /**
   * The value kept for the settings as they stand, if it is kept (nearly always): read without an
   * effect, so a call's path takes it without a step of its own.
   */
  readonly known: () => A | undefined
  /** The value for the settings as they stand: the kept one, or read again and kept. */
  readonly get: Effect.Effect<A>
}

/**
 * `read`, kept under the generation it was read at. The generation is read first, so what is kept
 * is never older than the generation it is kept under.
 */
export const perGeneration = <A>(generation: () => number, read: Effect.Effect<A>): PerGeneration<A> => {
  let kept: { readonly generation: number; readonly value: A } | undefined
  const known = (): A | undefined => kept !== undefined && kept.generation === generation() ? kept.value : undefined
  const get = Effect.suspend(() => {
    const now = generation()
    if (kept !== undefined && kept.generation === now) return Effect.succeed(kept.value)
    return Effect.map(read, (value) => {
      kept = { generation: now, value }
      return value
    })
  })
  return { known, get }
}
