/**
 * JSON-RPC framing in plain JSON. The fixture deliberately avoids the protocol package's schemas:
 * a test peer that shares the gateway's codecs would share its bugs.
 */
export type Id = string | number
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }
export type JsonObject = { readonly [k: string]: Json }

export interface Request {
  readonly jsonrpc: "2.0"
  readonly id: Id
  readonly method: string
  readonly params?: JsonObject
}
export interface Notification {
  readonly jsonrpc: "2.0"
  readonly method: string
  readonly params?: JsonObject
}
export interface ErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: Json
}
export interface Success {
  readonly jsonrpc: "2.0"
  readonly id: Id
  readonly result: JsonObject
}
export interface Failure {
  readonly jsonrpc: "2.0"
  readonly id: Id | null
  readonly error: ErrorObject
}
export type Response = Success | Failure
export type Message = Request | Notification | Response

export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)
const isId = (u: unknown): u is Id => typeof u === "string" || typeof u === "number"

/** What a decoded frame turned out to be; `invalid` carries the id when one could be read. */
export type Decoded =
  | { readonly _tag: "request"; readonly message: Request }
  | { readonly _tag: "notification"; readonly message: Notification }
  | { readonly _tag: "response"; readonly message: Response }
  | { readonly _tag: "invalid"; readonly id: Id | null; readonly code: number; readonly reason: string }

export const decode = (text: string): Decoded => {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return { _tag: "invalid", id: null, code: -32700, reason: "parse error" }
  }
  return classify(raw)
}

export const classify = (raw: unknown): Decoded => {
  if (Array.isArray(raw)) return { _tag: "invalid", id: null, code: -32600, reason: "batches are not accepted" }
  if (!isObject(raw) || raw["jsonrpc"] !== "2.0") {
    return { _tag: "invalid", id: null, code: -32600, reason: "not a JSON-RPC 2.0 message" }
  }
  const id = raw["id"]
  const params = raw["params"]
  if (params !== undefined && !isObject(params)) {
    return { _tag: "invalid", id: isId(id) ? id : null, code: -32600, reason: "params must be an object" }
  }
  const method = raw["method"]
  if (typeof method === "string") {
    if (isId(id)) return { _tag: "request", message: raw as unknown as Request }
    if (id === undefined) return { _tag: "notification", message: raw as unknown as Notification }
    return { _tag: "invalid", id: null, code: -32600, reason: "bad id" }
  }
  if ((isId(id) || id === null) && ("result" in raw || "error" in raw)) {
    return { _tag: "response", message: raw as unknown as Response }
  }
  return { _tag: "invalid", id: isId(id) ? id : null, code: -32600, reason: "neither request nor response" }
}

export const success = (id: Id, result: JsonObject): Success => ({ jsonrpc: "2.0", id, result })

export const failure = (id: Id | null, code: number, message: string, data?: Json): Failure => ({
  jsonrpc: "2.0",
  id,
  error: data === undefined ? { code, message } : { code, message, data }
})

export const request = (id: Id, method: string, params: JsonObject): Request => ({ jsonrpc: "2.0", id, method, params })

export const isFailure = (r: Response): r is Failure => "error" in r

export const frame = (m: Message): string => JSON.stringify(m)
