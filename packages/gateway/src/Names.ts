/**
 * How upstream names appear to hosts: tools and prompts as `<namespace>__<name>`, resources as
 * `mcpx://<namespace>/<original uri>` — or, for a single server with prefixing off, exactly as the
 * upstream names them (what the conformance suite needs when it talks through the gateway).
 */
import * as Method from "@mcpx-fx/protocol/Method"

/** The separator between a namespace and a tool or prompt name. */
export const Separator = "__"

/** The URI scheme resources are re-homed under. */
export const ResourceScheme = "mcpx:"

/** A server as naming sees it. */
export interface Named {
  readonly namespace: string
  /** False only for the single-server, unprefixed configuration. */
  readonly prefixed: boolean
}

/** The name a host sees for an upstream tool or prompt. */
export const qualify = (server: Named, name: string): string => server.prefixed ? `${server.namespace}${Separator}${name}` : name

/** A tool (or prompt) definition under the name a host sees. */
export const qualifyTool = <T extends Readonly<Record<string, unknown>>>(server: Named, item: T): T =>
  typeof item.name === "string" ? { ...item, name: qualify(server, item.name) } : item

/** The URI a host sees for an upstream resource. */
export const qualifyUri = (server: Named, uri: string): string => server.prefixed ? `${ResourceScheme}//${server.namespace}/${uri}` : uri

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** A content block with the resource URI in it re-homed: a `resource_link`, or an embedded `resource`. */
const qualifyBlock = (server: Named, block: unknown): unknown => {
  if (!isObject(block)) return block
  if (block.type === "resource_link" && typeof block.uri === "string") return { ...block, uri: qualifyUri(server, block.uri) }
  if (block.type === "resource" && isObject(block.resource) && typeof block.resource.uri === "string") {
    return { ...block, resource: { ...block.resource, uri: qualifyUri(server, block.resource.uri) } }
  }
  return block
}

/**
 * A result with the resource URIs in it re-homed, so whatever a host is handed it can read back
 * through the gateway: resource links and embedded resources in a tool's content or a prompt's
 * messages, and the contents of a read. Everything else is left as the upstream sent it.
 */
export const qualifyResult = <R extends Readonly<Record<string, unknown>>>(server: Named, method: string, result: R): R => {
  if (!server.prefixed) return result
  switch (method) {
    case Method.ToolsCall:
      return Array.isArray(result.content) ? { ...result, content: result.content.map((b) => qualifyBlock(server, b)) } : result
    case Method.PromptsGet:
      return Array.isArray(result.messages)
        ? {
          ...result,
          messages: result.messages.map((m) => (isObject(m) ? { ...m, content: qualifyBlock(server, m.content) } : m))
        }
        : result
    case Method.ResourcesRead:
      return Array.isArray(result.contents)
        ? {
          ...result,
          contents: result.contents.map((c) => (isObject(c) && typeof c.uri === "string" ? { ...c, uri: qualifyUri(server, c.uri) } : c))
        }
        : result
    default:
      return result
  }
}

/**
 * Finds the server and upstream name behind a qualified name. Namespaces never contain `__` (the
 * config refuses them), so the first separator is the split.
 */
export const resolve = <S extends Named>(
  servers: ReadonlyArray<S>,
  qualified: string
): { readonly server: S; readonly name: string } | undefined => {
  const plain = servers.find((s) => !s.prefixed)
  if (plain !== undefined) return { server: plain, name: qualified }
  const at = qualified.indexOf(Separator)
  if (at <= 0) return undefined
  const namespace = qualified.slice(0, at)
  const server = servers.find((s) => s.namespace === namespace)
  return server === undefined ? undefined : { server, name: qualified.slice(at + Separator.length) }
}

/** Finds the server and upstream URI behind a re-homed resource URI. */
export const resolveUri = <S extends Named>(
  servers: ReadonlyArray<S>,
  uri: string
): { readonly server: S; readonly uri: string } | undefined => {
  const plain = servers.find((s) => !s.prefixed)
  if (plain !== undefined) return { server: plain, uri }
  const prefix = `${ResourceScheme}//`
  if (!uri.startsWith(prefix)) return undefined
  const rest = uri.slice(prefix.length)
  const slash = rest.indexOf("/")
  if (slash <= 0) return undefined
  const server = servers.find((s) => s.namespace === rest.slice(0, slash))
  return server === undefined ? undefined : { server, uri: rest.slice(slash + 1) }
}

/** `ns.tool` and `ns__tool` both name a tool; a bare name is left for a single unprefixed server. */
export const qualifiedToolName = (name: string): string => {
  if (name.includes("__")) return name
  const dot = name.indexOf(".")
  return dot > 0 ? `${name.slice(0, dot)}__${name.slice(dot + 1)}` : name
}
