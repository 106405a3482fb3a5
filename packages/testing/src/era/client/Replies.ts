/**
 * Reading the fixture's replies in tests. These throw on the wrong shape, with the whole reply in
 * the message, so a failing test says what actually came back.
 */
import { isObject, type Json, type JsonObject, type Message } from "../Wire.js"

const show = (m: unknown) => JSON.stringify(m)

export const resultOf = (m: Message | undefined): JsonObject => {
  if (m === undefined || !("result" in m)) throw new Error(`expected a result, got ${show(m)}`)
  return m.result
}

export const errorOf = (m: Message | undefined): { readonly code: number; readonly message: string; readonly data?: Json } => {
  if (m === undefined || !("error" in m)) throw new Error(`expected an error, got ${show(m)}`)
  return m.error
}

/** The first text block of a CallToolResult. */
export const textOf = (result: JsonObject): string => {
  const content = result["content"]
  const first = Array.isArray(content) ? (content as ReadonlyArray<Json>)[0] : undefined
  if (!isObject(first) || typeof first["text"] !== "string") throw new Error(`expected text content, got ${show(result)}`)
  return first["text"]
}

export const objectAt = (o: JsonObject, key: string): JsonObject => {
  const v = o[key]
  if (!isObject(v)) throw new Error(`expected an object at ${key}, got ${show(o)}`)
  return v
}
