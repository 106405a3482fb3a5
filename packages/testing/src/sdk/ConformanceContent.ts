/** The content blocks and results the conformance fixture's tools, prompts and resources return. */
import * as z from "zod"

/** A 1×1 red PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

export const text = (value: string) => ({ type: "text" as const, text: value })
export const done = (value: string) => ({ content: [text(value)] })
export const noArgs = z.object({})
