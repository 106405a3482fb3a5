/**
 * HTTP plumbing both HTTP transports share: reading capped bodies, naming connection failures,
 * turning a refused exchange into HTTPStatusError, and the id and header bookkeeping around it.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { FrameTooLarge, HTTPStatusError, TransportClosed } from "../Transport.js"

/** How much of a refused body an HTTPStatusError keeps: enough for an HTML error page's gist. */
export const ErrorBodyChars = 4 * 1024

// JSON-RPC ids are strings or numbers, and `1` and `"1"` are different ids.
/** A map key for a request id that keeps `1` and `"1"` apart. */
export { idKey } from "./Waiting.js"

/** The cause chain of a fetch failure as one line ("fetch failed: connect ECONNREFUSED …"). */
export const describeCause = (cause: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      if (current.message.length > 0 && !parts.includes(current.message)) parts.push(current.message)
      current = current.cause
    } else {
      parts.push(String(current))
      break
    }
  }
  return parts.length > 0 ? parts.join(": ") : "unknown error"
}

/** The request could not be sent or its answer could not be read: the upstream is out of reach. */
export const unreachable = (url: string, error: HttpClientError.HttpClientError): TransportClosed =>
  new TransportClosed({ reason: `cannot reach ${url}: ${describeCause(error.cause ?? error)}` })

/** The answer started but its body broke off. */
export const broken = (url: string, error: HttpClientError.HttpClientError): TransportClosed =>
  new TransportClosed({ reason: `connection to ${url} broke: ${describeCause(error.cause ?? error)}` })

/** The media type of a response, lower-cased, without parameters. */
export const mediaType = (response: HttpClientResponse.HttpClientResponse): string =>
  (response.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? ""

/** Whether a status is 2xx. */
export const isOk = (status: number): boolean => status >= 200 && status < 300

/**
 * Reads a whole body as text, failing with FrameTooLarge past `maxBytes` rather than buffering
 * whatever an upstream cares to send.
 */
export const readBody = (
  url: string,
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number
): Effect.Effect<string, FrameTooLarge | TransportClosed> => {
  const declared = Number(response.headers["content-length"] ?? Number.NaN)
  if (Number.isFinite(declared) && declared > maxBytes) return Effect.fail(new FrameTooLarge({ limit: maxBytes }))
  return Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    return response.stream.pipe(
      Stream.mapError((e) => broken(url, e)),
      Stream.runForEach((bytes): Effect.Effect<void, FrameTooLarge> => {
        size += bytes.length
        if (size > maxBytes) return Effect.fail(new FrameTooLarge({ limit: maxBytes }))
        chunks.push(bytes)
        return Effect.void
      }),
      Effect.map(() => {
        const decoder = new TextDecoder()
        return chunks.map((bytes, i) => decoder.decode(bytes, { stream: i < chunks.length - 1 })).join("")
      })
    )
  })
}

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
