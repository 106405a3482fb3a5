/**
 * A counted load for the fleet's kill test: `callers` SDK 2.x clients (2026-07-28) loop
 * `tools/call` of an echo tool through nginx, each call with a message of its own, and every call
 * lands in exactly one bucket: answered right (its own message back), failed retryably (the
 * connection failed, nginx answered 502/503/504, or a JSON-RPC error that says to call again),
 * wrong (anything else), or lost (no answer within `callTimeout`).
 */
import { ProtocolError, SdkHttpError } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { modernClient } from "./FleetHosts.js"

/** What the load saw so far. */
export interface Counts {
  readonly right: number
  readonly retryable: number
  /** What each wrong answer was. */
  readonly wrong: ReadonlyArray<string>
  readonly lost: number
  /** Why each retryable failure was, in short, with how often. */
  readonly retryableKinds: Readonly<Record<string, number>>
}

const Empty: Counts = { right: 0, retryable: 0, wrong: [], lost: 0, retryableKinds: {} }

/** A running load. */
export interface Load {
  readonly counts: Effect.Effect<Counts>
  /** Resolves once `n` calls in all were answered right. */
  readonly rightAtLeast: (n: number) => Effect.Effect<void>
  /** Stops the callers after their current call; the final counts. */
  readonly stop: Effect.Effect<Counts>
}

type Outcome =
  | { readonly _tag: "right" }
  | { readonly _tag: "retryable"; readonly kind: string }
  | { readonly _tag: "wrong"; readonly what: string }

const codeOf = (e: unknown): string | undefined => {
  let at: unknown = e
  for (let depth = 0; depth < 5 && typeof at === "object" && at !== null; depth++) {
    const code = (at as { code?: unknown }).code
    if (typeof code === "string" && /^E[A-Z]+$|^UND_ERR/.test(code)) return code
    at = (at as { cause?: unknown }).cause
  }
  return undefined
}

/** Sorts a failed call: what a client may retry, or a wrong answer. */
export const classify = (e: unknown): Outcome => {
  if (e instanceof SdkHttpError && [502, 503, 504].includes(e.status)) return { _tag: "retryable", kind: `http ${e.status}` }
  if (e instanceof ProtocolError && /again|retry/i.test(e.message)) return { _tag: "retryable", kind: `json-rpc ${e.code}` }
  const code = codeOf(e)
  if (code !== undefined) return { _tag: "retryable", kind: code }
  if (e instanceof TypeError && /fetch failed/.test(e.message)) return { _tag: "retryable", kind: "fetch failed" }
  return { _tag: "wrong", what: e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e) }
}

const record = (counts: Counts, outcome: Outcome): Counts => {
  switch (outcome._tag) {
    case "right":
      return { ...counts, right: counts.right + 1 }
    case "retryable":
      return {
        ...counts,
        retryable: counts.retryable + 1,
        retryableKinds: { ...counts.retryableKinds, [outcome.kind]: (counts.retryableKinds[outcome.kind] ?? 0) + 1 }
      }
    case "wrong":
      return { ...counts, wrong: [...counts.wrong, outcome.what] }
  }
}

/** Starts the load on `url` calling `tool` (an echo: `{message}` back as its text). */
export const start = (
  url: string,
  tool: string,
  callers: number,
  callTimeout: `${number} seconds` = "30 seconds"
): Effect.Effect<Load, never, Scope.Scope> =>
  Effect.gen(function*() {
    const ref = yield* SubscriptionRef.make(Empty)
    let running = true
    const caller = (k: number) =>
      Effect.gen(function*() {
        const { client } = yield* modernClient(url)
        for (let n = 0; running; n++) {
          const message = `caller ${k} call ${n}`
          const outcome = yield* Effect.tryPromise(() => client.callTool({ name: tool, arguments: { message } })).pipe(
            Effect.map((result): Outcome => {
              const content = (result as { content?: ReadonlyArray<{ type?: string; text?: string }> }).content
              return content?.[0]?.text === message ? { _tag: "right" } : { _tag: "wrong", what: JSON.stringify(result) }
            }),
            Effect.catchAll((e) => Effect.succeed(classify(e.error))),
            Effect.timeout(callTimeout),
            Effect.option
          )
          yield* SubscriptionRef.update(ref, (c) => (outcome._tag === "Some" ? record(c, outcome.value) : { ...c, lost: c.lost + 1 }))
        }
      }).pipe(Effect.scoped)
    const fibers = yield* Effect.forEach(Array.from({ length: callers }, (_, k) => k), (k) => Effect.forkScoped(caller(k)))
    return {
      counts: SubscriptionRef.get(ref),
      rightAtLeast: (n) => Stream.runDrain(Stream.takeUntil(ref.changes, (c) => c.right >= n)),
      stop: Effect.zipRight(
        Effect.sync(() => {
          running = false
        }),
        Effect.zipRight(Fiber.joinAll(fibers), SubscriptionRef.get(ref))
      )
    } satisfies Load
  })
