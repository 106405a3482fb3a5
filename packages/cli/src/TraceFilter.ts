/**
 * Which spans leave the process: only mcpx-fx's own (the MCP SERVER and CLIENT spans, which carry
 * `mcp.method.name`, and the `mcpx.*` spans of starts and questions) and whatever runs inside them.
 * Effect code makes spans on its own (`Effect.fn("Config.load")`, `@effect/sql`'s `sql.execute`,
 * the platform's HTTP spans): outside a call they would reach the collector as stray one-span
 * traces nobody asked for, so a span that would be a root and is not mcpx-fx's is made a no-op.
 *
 * A no-op carries `DisablePropagation`, so Effect skips it when it looks for a parent: what runs
 * under it is judged again as a root, not hung under a span that never leaves.
 */
import * as Context from "effect/Context"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

/** Whether a span that has no exported parent is mcpx-fx's own. */
export const isOwn = (name: string, options: Tracer.SpanOptions | undefined): boolean =>
  name.startsWith("mcpx.") || options?.attributes?.["mcp.method.name"] !== undefined

const dropped = new WeakSet<Tracer.AnySpan>()

class Dropped implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = "0000000000000000"
  readonly traceId = "00000000000000000000000000000000"
  readonly attributes = new Map<string, unknown>()
  readonly links: ReadonlyArray<Tracer.SpanLink> = []
  readonly sampled = false
  status: Tracer.SpanStatus
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    readonly kind: Tracer.SpanKind,
    startTime: bigint
  ) {
    this.status = { _tag: "Started", startTime }
    dropped.add(this)
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(): void {}
  event(): void {}
  addLinks(): void {}
}

/** `tracer`, exporting only mcpx-fx's spans and their children. */
export const filtered = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span(name, parent, context, links, startTime, kind, options) {
      const under = Option.getOrUndefined(parent)
      const exportedParent = under !== undefined && under._tag === "Span" && !dropped.has(under)
      if (exportedParent || isOwn(name, options)) return tracer.span(name, parent, context, links, startTime, kind, options)
      return new Dropped(name, parent, Context.add(context, Tracer.DisablePropagation, true), kind, startTime)
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })
