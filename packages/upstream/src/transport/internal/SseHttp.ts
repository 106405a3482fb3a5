/**
 * HTTP plumbing both HTTP transports share: turning a refused exchange into HTTPStatusError, and
 * the id and header bookkeeping around it (bodies are read by Wire.ts).
 */
import * as Method from "@mcpx-fx/protocol/Method"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Either from "effect/Either"
import { HTTPStatusError } from "../Transport.js"

/** How much of a refused body an HTTPStatusError keeps: enough for an HTML error page's gist. */
export const ErrorBodyChars = 4 * 1024

// JSON-RPC ids are strings or numbers, and `1` and `"1"` are different ids.
/** A map key for a request id that keeps `1` and `"1"` apart. */
export { idKey } from "./Waiting.js"

/** The media type of a response, lower-cased, without parameters. */
export const mediaType = (response: { readonly headers: Readonly<Record<string, string | undefined>> }): string =>
  (response.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? ""

/** Whether a status is 2xx. */
export const isOk = (status: number): boolean => status >= 200 && status < 300

/** The single JSON-RPC message a body holds, if it holds exactly one. */
export const singleMessage = (body: string): JsonRpc.Parsed | undefined => {
  if (body.trim().length === 0) return undefined
  const frame = JsonRpc.decodeUpstreamFrame(body)
  return Either.isRight(frame) && frame.right._tag === "Single" ? frame.right.parsed : undefined
}

/** The error object of a body that is a JSON-RPC error response, if it is one. */
export const rpcErrorOf = (parsed: JsonRpc.Parsed | undefined): JsonRpc.ErrorObject | undefined =>
  parsed !== undefined && JsonRpc.isErrorResponse(parsed.message) ? parsed.message.error : undefined

/** HTTPStatusError for a refused exchange, keeping a bounded slice of the body and the JSON-RPC error in it. */
export const statusError = (status: number, body: string, rpcError: JsonRpc.ErrorObject | undefined): HTTPStatusError =>
  new HTTPStatusError({
    status,
    body: body.length > ErrorBodyChars ? `${body.slice(0, ErrorBodyChars)}…` : body,
    ...(rpcError === undefined
      ? {}
      : { rpcError: rpcError.data === undefined ? { code: rpcError.code, message: rpcError.message } : rpcError })
  })

/** The value of a header in a record whose keys may be in any case. */
export const headerValue = (headers: Readonly<Record<string, string>> | undefined, name: string): string | undefined => {
  if (headers === undefined) return undefined
  const lower = name.toLowerCase()
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v
  return undefined
}

/** `notifications/cancelled` for a request abandoned by its caller. */
export const cancelled = (id: JsonRpc.RequestId, reason: string): JsonRpc.Notification =>
  JsonRpc.notification(Method.NotificationsCancelled, { requestId: id, reason })

/** Why a request is cancelled upstream when its stream is interrupted. */
export const CancelReason = "the client stopped waiting for the request"
