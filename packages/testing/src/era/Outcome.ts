/** What a tool call came to, before the serving era dresses it as a JSON-RPC reply. */
import type { ErrorObject, JsonObject } from "./Wire.js"

export type Outcome =
  | { readonly _tag: "result"; readonly result: JsonObject }
  | { readonly _tag: "input_required"; readonly inputRequests: JsonObject; readonly requestState: string }
  | { readonly _tag: "error"; readonly error: ErrorObject }
  /** The caller cancelled: no reply at all. */
  | { readonly _tag: "cancelled" }

export const text = (t: string, isError = false): Outcome => ({
  _tag: "result",
  result: { content: [{ type: "text", text: t }], ...(isError ? { isError: true } : {}) }
})

export const error = (code: number, message: string, data?: ErrorObject["data"]): Outcome => ({
  _tag: "error",
  error: data === undefined ? { code, message } : { code, message, data }
})

export const cancelled: Outcome = { _tag: "cancelled" }
