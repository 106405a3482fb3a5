/** Reading JSON-RPC replies in assertions, with the whole reply in every failure message. */
import { assert } from "@effect/vitest"
import type { Message } from "./StdioServe.js"

/** The result of a success response. */
export const result = (m: Message): Readonly<Record<string, unknown>> => {
  assert.isObject(m.result, `expected a result: ${JSON.stringify(m)}`)
  return m.result as Readonly<Record<string, unknown>>
}

/** The error of an error response. */
export const error = (m: Message): { readonly code: number; readonly message: string; readonly data?: unknown } => {
  assert.isObject(m.error, `expected an error: ${JSON.stringify(m)}`)
  const e = m.error as { code: unknown; message: unknown; data?: unknown }
  assert.isNumber(e.code, JSON.stringify(m))
  assert.isString(e.message, JSON.stringify(m))
  return e as { code: number; message: string; data?: unknown }
}

/** The content blocks of a tool result. */
export const content = (m: Message): ReadonlyArray<Readonly<Record<string, unknown>>> => {
  const c = result(m).content
  assert.isArray(c, JSON.stringify(m))
  return c as ReadonlyArray<Readonly<Record<string, unknown>>>
}

/** The text of a tool result's first block. */
export const firstText = (m: Message): string => {
  const first = content(m)[0]
  assert.isObject(first, JSON.stringify(m))
  assert.strictEqual(first?.type, "text", JSON.stringify(m))
  return String(first?.text)
}
