/**
 * OpenTelemetry traces for `daemon` and `serve`, on only when the standard variables name an OTLP
 * endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`)
 * and `OTEL_SDK_DISABLED` is not `true`. Spans go out over OTLP/HTTP (protobuf unless
 * `OTEL_EXPORTER_OTLP_PROTOCOL` says `http/json`) through `@effect/opentelemetry`'s own exporter,
 * with no OpenTelemetry SDK, and only mcpx-fx's own spans go (TraceFilter.ts).
 *
 * Off, the layer is empty and the exporter's code is never loaded (a dynamic import), so
 * `--help` and cold starts pay nothing for it, and `Tracing` keeps its default (false): the
 * Server, HTTP host, Prober and sessions then make no span and read no trace context.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Tracing from "@mcpx-fx/protocol/Tracing"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ProcessEnvironment } from "./Layers.js"
import * as TraceFilter from "./TraceFilter.js"
import { version } from "./version.js"

/** What the variables ask of the exporter. */
export interface TraceExport {
  readonly url: string
  readonly serviceName: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Record<string, string>
  /** How long spans wait in the batch (`OTEL_BSP_SCHEDULE_DELAY`, ms). */
  readonly exportInterval: Duration.Duration
}

type Env = Readonly<Record<string, string | undefined>>

const nonEmpty = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed.length === 0 ? undefined : trimmed
}

/** `k1=v1,k2=v2` with percent-encoded values, as `OTEL_EXPORTER_OTLP_HEADERS` is written; bad pairs are skipped. */
export const parseHeaders = (value: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const pair of (value ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    const key = pair.slice(0, at).trim()
    try {
      headers[key] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      continue
    }
  }
  return headers
}

/**
 * What the environment asks for: undefined when traces are off (no endpoint, or the SDK
 * disabled), a reason when they are asked for in a way mcpx-fx cannot export (gRPC).
 */
export const fromEnvironment = (env: Env): TraceExport | { readonly refused: string } | undefined => {
  if (nonEmpty(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return undefined
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT)
  if (traces === undefined && base === undefined) return undefined
  const url = traces ?? `${base?.replace(/\/+$/, "")}/v1/traces`
  const protocol = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? "http/protobuf"
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    return { refused: `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported (only http/protobuf and http/json); traces are off` }
  }
  const delay = Number(nonEmpty(env.OTEL_BSP_SCHEDULE_DELAY) ?? 5000)
  return {
    url,
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? "mcpx-fx",
    protocol,
    headers: { ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    exportInterval: Duration.millis(Number.isFinite(delay) && delay > 0 ? delay : 5000)
  }
}

/** The exporter and the tracer over it, loaded only now. */
const exporting = (asked: TraceExport): Effect.Effect<Layer.Layer<never>> =>
  Effect.promise(async () => {
    const [OtlpTracer, OtlpSerialization] = await Promise.all([
      import("@effect/opentelemetry/OtlpTracer"),
      import("@effect/opentelemetry/OtlpSerialization")
    ])
    const tracer = OtlpTracer.make({
      url: asked.url,
      resource: { serviceName: asked.serviceName, serviceVersion: version },
      headers: asked.headers,
      exportInterval: asked.exportInterval
    })
    return Layer.unwrapScoped(Effect.map(tracer, (made) => Layer.setTracer(TraceFilter.filtered(made)))).pipe(
      Layer.provide(asked.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
      Layer.provide(FetchHttpClient.layer)
    )
  })

/**
 * Traces when the variables ask for them: the OTLP tracer and `Tracing` on, for everything built
 * inside it. Its scope is the command's: spans still buffered when it closes (a SIGTERM) are sent
 * then, within the exporter's shutdown timeout.
 */
export const layer: Layer.Layer<never, never, ProcessEnvironment> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const asked = fromEnvironment((yield* ProcessEnvironment).env)
    if (asked === undefined) return Layer.empty
    if ("refused" in asked) return Layer.effectDiscard(Console.error(`mcpx-fx: ${asked.refused}`))
    return Layer.merge(yield* exporting(asked), Layer.succeed(Tracing.Tracing, true))
  })
)
