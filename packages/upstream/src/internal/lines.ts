/**
 * Line splitting with a size cap. Effect's `Stream.splitLines` has no cap, and an upstream that
 * never writes a newline would otherwise grow our memory without bound.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { FrameTooLarge } from "../Transport.js"

/** Splits text into lines (LF or CRLF), failing with FrameTooLarge when a line exceeds `max`. */
export const splitLinesCapped =
  (max: number) => <E, R>(self: Stream.Stream<string, E, R>): Stream.Stream<string, E | FrameTooLarge, R> =>
    self.pipe(
      Stream.mapAccumEffect("", (buffered, chunk: string) => {
        const parts = (buffered + chunk).split("\n")
        const rest = parts.pop() ?? ""
        const lines = parts.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l))
        if (rest.length > max || lines.some((l) => l.length > max)) {
          return Effect.fail(new FrameTooLarge({ limit: max }))
        }
        return Effect.succeed([rest, lines] as const)
      }),
      Stream.flattenIterables
    )
