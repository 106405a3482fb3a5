/**
 * What a session request can fail with besides its transport, and how those failures are told
 * apart.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Data from "effect/Data"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { UnsendableRequest } from "../transport/ModernHeaders.js"
import type { HTTPStatusError, TransportError } from "../transport/Transport.js"

/** The upstream answered with a JSON-RPC error; passed on with its code, message and data. */
export class UpstreamRpcError extends Schema.TaggedError<UpstreamRpcError>("@mcpx-fx/upstream/UpstreamRpcError")(
  "UpstreamRpcError",
  { server: Schema.String, method: Schema.String, code: Schema.Number, rpcMessage: Schema.String, data: Schema.optional(Schema.Unknown) }
) {
  override get message(): string {
    return `${this.server} answered ${this.method} with error ${this.code}: ${this.rpcMessage}`
  }
}

/** A modern upstream kept asking for input past the round limit. */
export class TooManyInputRounds extends Schema.TaggedError<TooManyInputRounds>("@mcpx-fx/upstream/TooManyInputRounds")(
  "TooManyInputRounds",
  { server: Schema.String, method: Schema.String, rounds: Schema.Number }
) {
  override get message(): string {
    return `${this.server} was still asking for input on ${this.method} after ${this.rounds} rounds`
  }
}

/** Everything a session request can fail with. */
export type SessionError = TransportError | UpstreamRpcError | TooManyInputRounds | UnsendableRequest

/** The JSON-RPC code of an error an upstream returned, when the error is one. */
export const rpcCodeOf = (e: SessionError): Option.Option<number> => e._tag === "UpstreamRpcError" ? Option.some(e.code) : Option.none()

/** Whether an upstream error says a capability was missing (so the caller should be told, not retried). */
export const isMissingCapability = (e: SessionError): boolean => e._tag === "UpstreamRpcError" && e.code === ErrorCode.MissingRequiredClientCapability

// Statuses with which a server that is not modern refuses a modern request it cannot place
// (no session id, unknown endpoint, no POST); a modern server says why with a modern error.
const notModernStatuses: ReadonlySet<number> = new Set([400, 404, 405])

/** A modern request refused as only a server that is not modern refuses it. */
export const refusedAsNotModern = (e: SessionError): e is HTTPStatusError =>
  e._tag === "HTTPStatusError" && notModernStatuses.has(e.status) &&
  (e.rpcError === undefined || !ErrorCode.isModernErrorCode(e.rpcError.code))

/**
 * A legacy request refused as only a server that no longer serves the session's revision refuses
 * it: -32022, an HTTP error whose body is a modern error, or a 400 that refuses the protocol
 * version (the TypeScript SDK's "Bad Request: Unsupported protocol version", id null). Other modern
 * codes in a delivered response are left alone: a legacy server may pass on what a server behind
 * it said.
 */
export const refusedAsNotLegacy = (e: SessionError): boolean =>
  (e._tag === "UpstreamRpcError" && e.code === ErrorCode.UnsupportedProtocolVersion) ||
  (e._tag === "HTTPStatusError" && e.rpcError !== undefined &&
    (ErrorCode.isModernErrorCode(e.rpcError.code) || (e.status === 400 && refusesVersion(e.rpcError.message))))

const refusesVersion = (message: string): boolean => /unsupported protocol version/i.test(message)

/**
 * Between the Prober and a legacy HTTP session: the server forgot the session and then refused
 * `initialize` (or no version was left to agree on), so it is not the legacy server it was.
 */
export class RefusedAgain extends Data.TaggedError("RefusedAgain")<{ readonly reason: string }> {}

/** The server said a mirrored header was missing or wrong (-32020). */
export const isHeaderMismatch = (e: SessionError): e is UpstreamRpcError | HTTPStatusError =>
  (e._tag === "UpstreamRpcError" && e.code === ErrorCode.HeaderMismatch) ||
  (e._tag === "HTTPStatusError" && e.rpcError?.code === ErrorCode.HeaderMismatch)
