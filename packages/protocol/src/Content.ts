/**
 * Content blocks: what tool results, prompt messages and sampling carry.
 *
 * `audio` arrived in 2025-03-26 and `resource_link` in 2025-06-18; Shape rewrites them for callers
 * of older revisions.
 */
import * as Schema from "effect/Schema"
import { Icon } from "./Implementation.js"
import { JsonObject, open, optionalKey } from "./Json.js"

/** Who a message or piece of data is for. */
export const Role = Schema.Literal("user", "assistant")
/** Who a message or piece of data is for. */
export type Role = typeof Role.Type

/** Display hints on content and resources (`lastModified` since 2025-06-18). */
export const Annotations = open({
  audience: optionalKey(Schema.Array(Role)),
  priority: optionalKey(Schema.Number),
  lastModified: optionalKey(Schema.String)
})
/** Display hints. */
export type Annotations = typeof Annotations.Type

const common = { annotations: optionalKey(Annotations), _meta: optionalKey(JsonObject) }

/** Text. */
export const TextContent = open({ type: Schema.Literal("text"), text: Schema.String, ...common })
/** Text. */
export type TextContent = typeof TextContent.Type

/** A base64 image. */
export const ImageContent = open({ type: Schema.Literal("image"), data: Schema.String, mimeType: Schema.String, ...common })
/** A base64 image. */
export type ImageContent = typeof ImageContent.Type

/** Base64 audio (2025-03-26 and later). */
export const AudioContent = open({ type: Schema.Literal("audio"), data: Schema.String, mimeType: Schema.String, ...common })
/** Base64 audio. */
export type AudioContent = typeof AudioContent.Type

/** The text of a resource. */
export const TextResourceContents = open({
  uri: Schema.String,
  mimeType: optionalKey(Schema.String),
  text: Schema.String,
  _meta: optionalKey(JsonObject)
})
/** The text of a resource. */
export type TextResourceContents = typeof TextResourceContents.Type

/** The bytes of a resource, base64. */
export const BlobResourceContents = open({
  uri: Schema.String,
  mimeType: optionalKey(Schema.String),
  blob: Schema.String,
  _meta: optionalKey(JsonObject)
})
/** The bytes of a resource. */
export type BlobResourceContents = typeof BlobResourceContents.Type

/** Resource contents, text or bytes. */
export const ResourceContents = Schema.Union(TextResourceContents, BlobResourceContents)
/** Resource contents. */
export type ResourceContents = typeof ResourceContents.Type

/** A resource embedded with its contents. */
export const EmbeddedResource = open({ type: Schema.Literal("resource"), resource: ResourceContents, ...common })
/** A resource embedded with its contents. */
export type EmbeddedResource = typeof EmbeddedResource.Type

/** A link to a resource, without its contents (2025-06-18 and later). */
export const ResourceLink = open({
  type: Schema.Literal("resource_link"),
  uri: Schema.String,
  name: Schema.String,
  title: optionalKey(Schema.String),
  description: optionalKey(Schema.String),
  mimeType: optionalKey(Schema.String),
  size: optionalKey(Schema.Number),
  icons: optionalKey(Schema.Array(Icon)),
  ...common
})
/** A link to a resource. */
export type ResourceLink = typeof ResourceLink.Type

/** Any content block. */
export const ContentBlock = Schema.Union(TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink)
/** Any content block. */
export type ContentBlock = typeof ContentBlock.Type

/** Builds a text block. */
export const text = (value: string): TextContent => ({ type: "text", text: value })
