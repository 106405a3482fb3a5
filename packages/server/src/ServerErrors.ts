/**
 * The failures the Server raises while handling a request, and `errorObject`, the one place their
 * JSON-RPC codes are chosen.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject } from "@mcpx-fx/protocol/Json"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import * as Shape from "@mcpx-fx/protocol/Shape"
import * as Data from "effect/Data"
import type { BackendError } from "./Backend.js"
import type * as RequestState from "./RequestState.js"
import * as Shutdown from "./Shutdown.js"
import type { TaskStoreError } from "./TaskStore.js"

// ---------------------------------------------------------------------------------------------
// Failures raised while handling a request; `errorObject` turns every one into a JSON-RPC error.

/** The request's params are not what the method takes. */
export class InvalidParams extends Data.TaggedError("InvalidParams")<{ readonly detail: string; readonly data?: unknown }> {}

/** The method is not served to this caller (unknown, of the other era, or an undeclared feature). */
export class MethodNotFound extends Data.TaggedError("MethodNotFound")<{ readonly method: string; readonly detail: string }> {}

/** A second `initialize` on a connection that already negotiated. */
export class AlreadyInitialized extends Data.TaggedError("AlreadyInitialized")<{ readonly revision: Revision.LegacyRevision }> {}

/** A result the caller's era cannot receive (an `input_required` for a legacy caller). */
export class UnshapeableResult extends Data.TaggedError("UnshapeableResult")<{ readonly detail: string }> {}

/** A 2025-11-25 `tasks/result` of a task that failed or was cancelled: its error, as the call would have answered it. */
export class TaskEnded
  extends Data.TaggedError("TaskEnded")<{ readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } }>
{}

/** Anything `handle` can turn into an error response. */
export type HandleError =
  | BackendError
  | InvalidParams
  | MethodNotFound
  | AlreadyInitialized
  | UnshapeableResult
  | Meta.InvalidRequestMeta
  | Meta.UnsupportedProtocolVersion
  | RequestState.InvalidRequestState
  | TaskStoreError
  | TaskEnded

/** Codes an upstream may answer mcpx-fx with that would mean something else to the host. */
const reservedUpstream = (code: number, era: Revision.Era): boolean =>
  code === ErrorCode.HeaderMismatch ||
  code === ErrorCode.MissingRequiredClientCapability ||
  code === ErrorCode.UnsupportedProtocolVersion ||
  (era === "modern" && code === ErrorCode.UrlElicitationRequired)

/**
 * The JSON-RPC error for every failure, for a caller of `era`. The choices the spec leaves open:
 * - an unknown tool, prompt or server is -32602 naming the closest matches; an unknown resource is
 *   -32002 for a legacy caller and -32602 for a modern one (the code moved in 2026-07-28);
 * - an upstream's own error keeps its code, message and data (a legacy -32002 is upgraded to
 *   -32602 for a modern caller), except the codes the specification reserves for the exchange
 *   between a client and a server: -32020 (header mismatch) and -32022 (unsupported version),
 *   and for a modern caller -32042 (which 2026-07-28 must not send), were about mcpx-fx's own
 *   request upstream, never the host's, so they become -32603 naming the upstream, with its code,
 *   message and data under `data`; a -32021 naming `requiredCapabilities` is about the
 *   capabilities mcpx-fx passed on for the host, so mcpx-fx says it itself, as for its own
 *   missing capability (-32021 to a modern caller, -32603 to a legacy one), naming the upstream;
 * - a timeout and an unreachable upstream are -32603 (the server failed), with data that says
 *   which, so a client can tell them apart without a code of our own;
 * - a missing client capability is -32021 for a modern caller; a legacy caller has no such code,
 *   so it gets -32603 with the same data;
 * - a retry's `requestState` that fails its checks is -32602: the specification only says it MUST be
 *   rejected (mrtr.mdx, server obligations), and the conformance suite expects -32602 for it; so is
 *   a retry naming a pending call that has ended or a round already answered, or answers that do
 *   not fit their questions; a bound on questions (rounds, calls waiting) is -32603.
 */
export const errorObject = (e: HandleError, era: Revision.Era): JsonRpc.ErrorObject => {
  const obj = (code: number, message: string, data?: unknown): JsonRpc.ErrorObject => data === undefined ? { code, message } : { code, message, data }
  switch (e._tag) {
    case "InvalidRequestMeta":
    case "UnsupportedProtocolVersion": {
      const m = Meta.metaErrorObject(e)
      return obj(m.code, m.message, m.data)
    }
    case "InvalidParams":
      return obj(ErrorCode.InvalidParams, `Invalid params: ${e.detail}`, e.data)
    case "MethodNotFound":
      return obj(ErrorCode.MethodNotFound, `Method not found: ${e.detail}`, { method: e.method })
    case "AlreadyInitialized":
      return obj(ErrorCode.InvalidRequest, `Invalid Request: this connection already negotiated ${e.revision}`)
    case "UnshapeableResult":
      return obj(ErrorCode.InternalError, `Internal error: ${e.detail}`)
    case "InvalidRequestState":
      return obj(ErrorCode.InvalidParams, `Invalid params: ${e.message}`, { reason: e.reason })
    case "UnknownName": {
      const data = { kind: e.kind, name: e.name, suggestions: [...e.suggestions] }
      return e.kind === "resource" && era === "legacy"
        ? obj(ErrorCode.ResourceNotFound, e.message, { uri: e.name, suggestions: [...e.suggestions] })
        : obj(ErrorCode.InvalidParams, e.message, data)
    }
    case "UpstreamError": {
      const required = e.code === ErrorCode.MissingRequiredClientCapability && isJsonObject(e.data) && isJsonObject(e.data.requiredCapabilities)
        ? e.data.requiredCapabilities
        : undefined
      if (required !== undefined) {
        const why = `upstream ${e.server} needs it for ${e.method}`
        return era === "modern"
          ? obj(ErrorCode.MissingRequiredClientCapability, `Missing required client capability (${why})`, { requiredCapabilities: required })
          : obj(ErrorCode.InternalError, `the client lacks a capability ${why}: ${e.rpcMessage}`, { requiredCapabilities: required })
      }
      return reservedUpstream(e.code, era)
        ? obj(ErrorCode.InternalError, `upstream ${e.server} answered ${e.method} with error ${e.code}: ${e.rpcMessage}`, {
          reason: "upstream-error",
          server: e.server,
          method: e.method,
          upstream: e.data === undefined ? { code: e.code, message: e.rpcMessage } : { code: e.code, message: e.rpcMessage, data: e.data }
        })
        : obj(era === "modern" ? Shape.upgradeErrorCode(e.code) : e.code, e.rpcMessage, e.data)
    }
    case "CallTimedOut":
      return obj(ErrorCode.InternalError, e.message, { reason: "timeout", server: e.server, method: e.method, timeoutMs: e.timeoutMs })
    case "CapabilityRequired":
      return era === "modern"
        ? obj(ErrorCode.MissingRequiredClientCapability, "Missing required client capability", {
          requiredCapabilities: e.requiredCapabilities
        })
        : obj(ErrorCode.InternalError, e.message, { requiredCapabilities: e.requiredCapabilities })
    case "InputRefused":
      return e.clientError
        ? obj(ErrorCode.InvalidParams, `Invalid params: ${e.detail}`, { reason: e.reason })
        : obj(ErrorCode.InternalError, e.detail, { reason: e.reason })
    case "BackendUnavailable":
      return obj(
        ErrorCode.InternalError,
        e.message,
        e.server === undefined ? { reason: "unavailable" } : { reason: "unavailable", server: e.server }
      )
    case "ShuttingDown":
      return obj(ErrorCode.InternalError, Shutdown.ShutdownMessage, { reason: Shutdown.ShutdownReason })
    case "TaskEnded":
      return obj(e.error.code, e.error.message, e.error.data)
    case "TaskStoreError":
      return obj(ErrorCode.InternalError, e.message, { reason: "task-store" })
  }
}
