/**
 * A progress line for long upstream starts (an upstream that npx is still downloading can take a
 * minute): while any server is starting, stderr shows which ones and for how long, rewritten in
 * place. Only on a terminal; a pipe or a log file gets nothing.
 */
import { Pool } from "@mcpx-fx/upstream/pool/Pool"
import type { PoolStatus } from "@mcpx-fx/upstream/pool/PoolStatus"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** The servers with an instance still starting, by name. */
export const starting = (snapshot: ReadonlyArray<PoolStatus>): ReadonlyArray<string> =>
  snapshot.filter((s) => s.instances.some((i) => i.state === "starting")).map((s) => s.server)

/** The line for the servers still starting after `elapsedMs`, or undefined when none is. */
export const line = (servers: ReadonlyArray<string>, elapsedMs: number): string | undefined =>
  servers.length === 0 ? undefined : `mcpx-fx: starting ${servers.join(", ")}... ${Math.floor(elapsedMs / 1000)}s`

// Erases the line: carriage return, then clear to the end of the line.
const erase = "\r\x1b[K"

/**
 * Shows the progress line on `write` while servers start, from `after` on (quick starts show
 * nothing), and erases it when the scope closes. `write` is stderr on a terminal.
 */
export const show = (
  write: (text: string) => void,
  options: { readonly after: number; readonly every: number } = { after: 1000, every: 500 }
): Effect.Effect<void, never, Pool | Scope.Scope> =>
  Effect.gen(function*() {
    const pool = yield* Pool
    let shown = false
    let elapsed = 0
    yield* Effect.addFinalizer(() => Effect.sync(() => shown && write(erase)))
    yield* Effect.sleep(options.after).pipe(
      Effect.zipRight(
        Effect.forever(
          Effect.gen(function*() {
            const text = line(starting(yield* pool.snapshot), options.after + elapsed)
            elapsed += options.every
            if (text !== undefined) write(`${erase}${text}`)
            else if (shown) write(erase)
            shown = text !== undefined
            yield* Effect.sleep(options.every)
          })
        )
      ),
      Effect.forkScoped
    )
  })
