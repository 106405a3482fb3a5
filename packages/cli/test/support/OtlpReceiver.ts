/**
 * An OTLP/HTTP trace receiver for tests: a plain node:http server on 127.0.0.1 that accepts JSON
 * `POST /v1/traces` (what an exporter sends with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and
 * keeps every span, flattened with its attributes as plain values. Tests wait for spans by being
 * told of each export, never by sleeping; the server closes with its scope.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { listenLocal } from "@mcpx-fx/testing/Listening"
import { createServer } from "node:http"

/** One received span. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP's SpanKind: 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly serviceName: unknown
  /** OTLP's Status: code 0 unset, 1 ok, 2 error, and its message. */
  readonly status: { readonly code: number; readonly message?: string }
}

/** A running receiver. */
export interface Receiver {
  /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it. */
  readonly endpoint: string
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** Waits until `ready` accepts the spans received so far. */
  readonly until: (ready: (spans: ReadonlyArray<ReceivedSpan>) => boolean) => Effect.Effect<ReadonlyArray<ReceivedSpan>>
}

type Json = Record<string, unknown>

const isJson = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const list = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])

/** An OTLP AnyValue as a plain value. */
const plain = (value: unknown): unknown => {
  if (!isJson(value)) return undefined
  if ("stringValue" in value) return value.stringValue
  if ("boolValue" in value) return value.boolValue
  if ("intValue" in value) return Number(value.intValue)
  if ("doubleValue" in value) return value.doubleValue
  return value
}

const attributesOf = (u: unknown): Record<string, unknown> => Object.fromEntries(list(u).filter(isJson).map((a) => [String(a.key), plain(a.value)]))

const statusOf = (u: unknown): ReceivedSpan["status"] => {
  if (!isJson(u)) return { code: 0 }
  const code = Number(u.code ?? 0)
  return typeof u.message === "string" && u.message.length > 0 ? { code, message: u.message } : { code }
}

/** The spans of one export request body. */
export const spansOf = (body: unknown): ReadonlyArray<ReceivedSpan> =>
  list(isJson(body) ? body.resourceSpans : undefined).filter(isJson).flatMap((rs) => {
    const serviceName = attributesOf(isJson(rs.resource) ? rs.resource.attributes : undefined)["service.name"]
    return list(rs.scopeSpans).filter(isJson).flatMap((ss) =>
      list(ss.spans).filter(isJson).map((s): ReceivedSpan => ({
        traceId: String(s.traceId),
        spanId: String(s.spanId),
        parentSpanId: typeof s.parentSpanId === "string" && s.parentSpanId.length > 0 ? s.parentSpanId : undefined,
        name: String(s.name),
        kind: Number(s.kind),
        attributes: attributesOf(s.attributes),
        serviceName,
        status: statusOf(s.status)
      }))
    )
  })

/** Starts a receiver on an ephemeral loopback port. */
export const start: Effect.Effect<Receiver, never, Scope.Scope> = Effect.gen(function*() {
  const received: Array<ReceivedSpan> = []
  const listeners = new Set<() => void>()
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end()
        return
      }
      try {
        received.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
      } catch {
        res.writeHead(400).end()
        return
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
      for (const l of [...listeners]) l()
    })
  })
  const port = yield* listenLocal(server)
  const until = (ready: (spans: ReadonlyArray<ReceivedSpan>) => boolean) =>
    Effect.async<ReadonlyArray<ReceivedSpan>>((resume) => {
      const check = () => {
        if (!ready(received)) return
        listeners.delete(check)
        resume(Effect.succeed([...received]))
      }
      listeners.add(check)
      check()
      return Effect.sync(() => void listeners.delete(check))
    })
  return { endpoint: `http://127.0.0.1:${port}`, spans: () => [...received], until }
})
