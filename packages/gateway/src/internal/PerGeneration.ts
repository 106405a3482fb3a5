/**
 * Settings read on a hot path, read again only once the settings' generation moves (a runtime
 * change or a reload) rather than on every call.
 */
import * as Effect from "effect/Effect"

/**
 * `read`, kept under the generation it was read at. The generation is read first, so what is kept
 * is never older than the generation it is kept under.
 */
export const perGeneration = <A>(generation: Effect.Effect<number>, read: Effect.Effect<A>): Effect.Effect<A> => {
  let kept: { readonly generation: number; readonly value: A } | undefined
  return Effect.flatMap(generation, (now) =>
    kept !== undefined && kept.generation === now ? Effect.succeed(kept.value) : Effect.map(read, (value) => {
      kept = { generation: now, value }
      return value
    }))
}
