/**
 * The Prober's two opening exchanges on one connection: `server/discover` with the full `_meta`,
 * and `initialize`, each with its -32022 retries, answering what the server's reply means for its
 * era (`Outcome`, `Opened`). Every step is told to `note`; `fail` makes the ProbeFailed that names them.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as Capabilities from "@mcpx-fx/protocol/Capabilities"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { modernHeaders } from "../../transport/ModernHeaders.js"
import type { Negotiation } from "../Negotiator.js"
import type { ProbeError, ProbeFailed } from "../ProbeModel.js"
import type { Established, SessionOptions } from "../../session/SessionModel.js"
import type { Connection } from "../../transport/Transport.js"

export type Outcome =
  | { readonly _tag: "Modern"; readonly established: Omit<Established, "eraSource"> }
  | { readonly _tag: "Legacy"; readonly why: string }

export type Opened =
  | { readonly _tag: "Legacy"; readonly established: Omit<Established, "eraSource"> }
  | { readonly _tag: "Refused"; readonly why: string; readonly modernEvidence: boolean }

/** What the exchanges report to and fail with. */
export interface ExchangeEnv {
  readonly note: (text: string) => Effect.Effect<void>
  readonly fail: (reason: string) => ProbeFailed
  readonly session: SessionOptions
}

const modernErrorCodes: ReadonlyArray<number> = ErrorCode.ModernErrorCodes

const legacyCapabilities = (caps: JsonObject): JsonObject => Capabilities.clientCapabilitiesFor("2025-11-25", caps)

/** The exchanges of one start (request ids are numbered per start). */
export const makeExchanges = (env: ExchangeEnv) => {
  const { fail, note } = env
  const clientInfo = env.session.clientInfo
  const caps = env.session.clientCapabilities

  // One request, answered by its final message. Questions during a probe are answered alone.
  const ask = (conn: Connection, req: JsonRpc.Request, era: Revision.Era, headers: Record<string, string>) =>
    conn.request(req, { era, headers }).pipe(
      Stream.runCollect,
      Effect.map((c) => Chunk.last(c).pipe(Option.map((p) => p.message), Option.filter(JsonRpc.isResponse))),
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(fail(`${req.method} ended without a response`)),
        onSome: Effect.succeed
      }))
    )

  let ids = 0
  const discover = (conn: Connection, negotiation: Negotiation) =>
    Effect.gen(function*() {
      while (true) {
        const version = yield* negotiation.offer("modern")
        const params = { _meta: Meta.requestMeta({ protocolVersion: version, clientCapabilities: caps, clientInfo }) }
        yield* note(`sent server/discover (${version})`)
        const headers = conn.wire === "stdio" ? {} : yield* modernHeaders(Method.ServerDiscover, params, new Map())
        const answer = yield* ask(
          conn,
          JsonRpc.request(`mcpx-probe-${++ids}`, "server/discover", params),
          "modern",
          headers
        ).pipe(
          Effect.map(Either.right),
          Effect.catchTag("HTTPStatusError", (e) => Effect.succeed(Either.left(e)))
        )
        if (answer._tag === "Left") {
          const e = answer.left
          if (e.status >= 500) return yield* fail(`server/discover answered HTTP ${e.status}; not cached`)
          if (e.rpcError !== undefined && modernErrorCodes.includes(e.rpcError.code)) {
            yield* note(`HTTP ${e.status} with modern error ${e.rpcError.code}: modern`)
            return modernWithout(version)
          }
          yield* note(`HTTP ${e.status} without a modern error: legacy`)
          return { _tag: "Legacy", why: `server/discover answered HTTP ${e.status}` } as Outcome
        }
        const m = answer.right
        if (JsonRpc.isErrorResponse(m)) {
          const { code, message, data } = m.error
          if (code === ErrorCode.UnsupportedProtocolVersion) {
            const step = yield* negotiation.onUnsupportedVersion("modern", data)
            if (step._tag === "Retry") {
              yield* note(`-32022: retrying with ${step.version}`)
              continue
            }
            yield* note(`-32022 naming only legacy versions: legacy`)
            return { _tag: "Legacy", why: "its -32022 named only legacy versions" } as Outcome
          }
          if (modernErrorCodes.includes(code)) {
            yield* note(`error ${code} (${message}): modern`)
            return modernWithout(version)
          }
          yield* note(`error ${code} (${message}): legacy`)
          return { _tag: "Legacy", why: `server/discover answered error ${code}` } as Outcome
        }
        const result = (m as JsonRpc.SuccessResponse).result
        if (!Array.isArray(result.supportedVersions)) {
          yield* note(`a success that is not a DiscoverResult: legacy`)
          return { _tag: "Legacy", why: "server/discover succeeded without supportedVersions" } as Outcome
        }
        const negotiated = yield* negotiation.acceptDiscover(result.supportedVersions.filter(isString))
        yield* note(`DiscoverResult supporting ${result.supportedVersions.join(", ")}: modern ${negotiated}`)
        return {
          _tag: "Modern",
          established: {
            era: "modern",
            negotiated,
            serverInfo: serverInfoOf(result),
            capabilities: isJsonObject(result.capabilities) ? result.capabilities : {},
            instructions: typeof result.instructions === "string" ? result.instructions : undefined
          }
        } as Outcome
      }
    })

  const initialize = (conn: Connection, negotiation: Negotiation): Effect.Effect<Opened, ProbeError> =>
    Effect.gen(function*() {
      while (true) {
        const version = yield* negotiation.offer("legacy")
        yield* note(`sent initialize (${version})`)
        const m = yield* ask(
          conn,
          JsonRpc.request(`mcpx-init-${++ids}`, Method.Initialize, {
            protocolVersion: version,
            capabilities: legacyCapabilities(caps),
            clientInfo
          }),
          "legacy",
          {}
        )
        if (JsonRpc.isErrorResponse(m)) {
          const { code, message, data } = m.error
          const supported = isJsonObject(data) && Array.isArray(data.supported)
          if (supported) {
            const step = yield* negotiation.onUnsupportedVersion("legacy", data)
            if (step._tag === "Retry") {
              yield* note(`initialize refused (${code}); retrying with ${step.version}`)
              continue
            }
            yield* note(`initialize refused naming only modern versions`)
            return { _tag: "Refused", why: `initialize refused: ${message}`, modernEvidence: true } as Opened
          }
          yield* note(`initialize refused with error ${code} (${message})`)
          return {
            _tag: "Refused",
            why: `initialize refused with error ${code}: ${message}`,
            modernEvidence: modernErrorCodes.includes(code)
          } as Opened
        }
        const result = (m as JsonRpc.SuccessResponse).result
        const negotiated = yield* negotiation.acceptInitialize(result.protocolVersion)
        yield* conn.notify(JsonRpc.notification(Method.Initialized), {
          era: "legacy",
          headers: Revision.atLeast(negotiated, "2025-06-18") ? { "MCP-Protocol-Version": negotiated } : {}
        })
        yield* note(`initialize answered ${negotiated}: legacy`)
        return {
          _tag: "Legacy",
          established: {
            era: "legacy",
            negotiated,
            serverInfo: isJsonObject(result.serverInfo) ? result.serverInfo : undefined,
            capabilities: isJsonObject(result.capabilities) ? result.capabilities : {},
            instructions: typeof result.instructions === "string" ? result.instructions : undefined
          }
        } as Opened
      }
    })

  return { discover, initialize }
}

export const isClosed = (cause: Cause.Cause<unknown>): boolean =>
  Option.exists(Cause.failureOption(cause), (e) => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "TransportClosed")

const modernWithout = (version: Revision.ModernRevision): Outcome => ({
  _tag: "Modern",
  established: { era: "modern", negotiated: version, serverInfo: undefined, capabilities: {}, instructions: undefined }
})

const serverInfoOf = (result: JsonObject): JsonObject | undefined => {
  const meta = Meta.metaOf(result)
  const info = meta?.[Meta.ServerInfoKey]
  return isJsonObject(info) ? info : isJsonObject(result.serverInfo) ? result.serverInfo : undefined
}

const isString = (u: unknown): u is string => typeof u === "string"

export const messageOf = (u: unknown): string => (u instanceof Error ? u.message : String(u))

/** An initialize that failed short of the process exiting: for the era, a refusal. */
export const refusedBy = (cause: Cause.Cause<unknown>): Extract<Opened, { _tag: "Refused" }> => ({
  _tag: "Refused",
  why: messageOf(Cause.squash(cause)),
  modernEvidence: false
})
