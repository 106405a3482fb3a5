/**
 * Who is speaking: `Implementation` (clientInfo, serverInfo) and the icons several MCP objects carry.
 */
import * as Schema from "effect/Schema"
import { open, optionalKey } from "./Json.js"

/** A sized icon a user interface can show (2025-11-25 and later). */
export const Icon = open({
  src: Schema.String,
  mimeType: optionalKey(Schema.String),
  sizes: optionalKey(Schema.Array(Schema.String)),
  theme: optionalKey(Schema.Literal("light", "dark"))
})
/** A sized icon. */
export type Icon = typeof Icon.Type

/**
 * Name and version of a client or server. `title` arrived in 2025-06-18; `icons`, `description` and
 * `websiteUrl` in 2025-11-25. Self-reported: never a reason to behave differently.
 */
export const Implementation = open({
  name: Schema.String,
  version: Schema.String,
  title: optionalKey(Schema.String),
  icons: optionalKey(Schema.Array(Icon)),
  description: optionalKey(Schema.String),
  websiteUrl: optionalKey(Schema.String)
})
/** Name and version of a client or server. */
export type Implementation = typeof Implementation.Type
