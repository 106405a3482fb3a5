/**
 * The modern (2026-07-28) side of the fixture: per-request `_meta` validation, `server/discover`,
 * results dressed with resultType, cache hints and serverInfo, and MRTR for `ask_name`.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Revision from "@mcpx-fx/protocol/Revision"
import { capabilitiesOf, type Context, serverInfo } from "./Context.js"
import { NotifyChangesTool } from "./Legacy.js"
import * as Tools from "./Tools.js"
import { type Failure, failure, type Id, isObject, type JsonObject, type Message, type Request, type Response, success } from "./Wire.js"

export const VersionKey = "io.modelcontextprotocol/protocolVersion"
export const CapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
export const ServerInfoKey = "io.modelcontextprotocol/serverInfo"

export const metaOf = (params: JsonObject | undefined): JsonObject | undefined => {
  const meta = params?.["_meta"]
  return isObject(meta) ? meta : undefined
}

/** Whether a message claims the modern era by its body alone. */
export const claimsModern = (method: string, params: JsonObject | undefined): boolean =>
  method === "server/discover" || metaOf(params)?.[VersionKey] !== undefined

export interface Meta {
  readonly version: string
  readonly clientCapabilities: JsonObject
}

const newestFirst = (vs: ReadonlyArray<string>): Array<string> => [...vs].sort(Revision.compare).reverse()

/** What -32022 names: every version this server speaks, modern first, as the specification's example does. */
export const supportedForError = (ctx: Context): Array<string> => [
  ...newestFirst(ctx.options.modernVersions),
  ...newestFirst(ctx.options.legacyVersions)
]

export const unsupported = (ctx: Context, id: Request["id"], requested: unknown): Failure =>
  failure(id, ErrorCode.UnsupportedProtocolVersion, "unsupported protocol version", {
    supported: supportedForError(ctx),
    requested: typeof requested === "string" ? requested : null
  })

/** The `_meta` fields every modern request must carry, or the error that refuses it. */
export const validate = (ctx: Context, req: Request): Meta | Failure => {
  const meta = metaOf(req.params)
  const version = meta?.[VersionKey]
  const caps = meta?.[CapabilitiesKey]
  if (typeof version !== "string" || !isObject(caps)) {
    return failure(req.id, ErrorCode.InvalidParams, `_meta needs ${VersionKey} and ${CapabilitiesKey}`)
  }
  if (!ctx.options.modernVersions.includes(version)) return unsupported(ctx, req.id, version)
  return { version, clientCapabilities: caps }
}

export const isFailure = (v: Meta | Failure): v is Failure => "error" in v

/** modern-only: a legacy `initialize` is refused with the versions it could have used instead. */
export const refuseInitialize = (ctx: Context, req: Request): Failure => unsupported(ctx, req.id, req.params?.["protocolVersion"])

/** HTTP status for a modern reply, a function of the JSON-RPC error alone (2026-07-28 §status). */
export const statusOf = (r: Response): number => {
  if (!("error" in r)) return 200
  switch (r.error.code) {
    case ErrorCode.MethodNotFound:
      return 404
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
    case ErrorCode.InvalidParams:
    case ErrorCode.InvalidRequest:
    case ErrorCode.ParseError:
      return 400
    default:
      return 200
  }
}

const dress = (ctx: Context, result: JsonObject, cacheable: boolean): JsonObject => {
  const meta = isObject(result["_meta"]) ? result["_meta"] : {}
  return {
    ...result,
    resultType: "complete",
    ...(cacheable ? { ttlMs: 30_000, cacheScope: "public" } : {}),
    _meta: { ...meta, [ServerInfoKey]: serverInfo(ctx) }
  }
}

const discover = async (ctx: Context, req: Request, signal: AbortSignal): Promise<Response | undefined> => {
  if (ctx.options.mode === "slow-discover" && !(await Tools.sleep(ctx.options.discoverDelayMs, signal))) return undefined
  return success(
    req.id,
    dress(ctx, {
      supportedVersions: newestFirst(ctx.options.modernVersions),
      capabilities: capabilitiesOf(ctx),
      instructions: `era fixture in mode ${ctx.options.mode}`
    }, true)
  )
}

const SubscriptionIdKey = "io.modelcontextprotocol/subscriptionId"

/** An open `subscriptions/listen` (stdio only: its notifications share the connection's output). */
interface Listener {
  readonly id: Id
  readonly toolsListChanged: boolean
  /** The URIs it asked to hear `resources/updated` for. */
  readonly resources: ReadonlyArray<string>
  readonly write: (m: Message) => void
}
const listeners = new Set<Listener>()

/** Acknowledges what it honours (tools list_changed, resource subscriptions), then stays open until cancelled. */
const listen = async (req: Request, write: ((m: Message) => void) | undefined, signal: AbortSignal): Promise<Response | undefined> => {
  if (write === undefined) return failure(req.id, ErrorCode.MethodNotFound, "subscriptions/listen is served over stdio only")
  const asked = req.params?.["notifications"]
  const toolsListChanged = isObject(asked) && asked["toolsListChanged"] === true
  const wanted = isObject(asked) && Array.isArray(asked["resourceSubscriptions"]) ? asked["resourceSubscriptions"] : []
  const resources = wanted.filter((u): u is string => typeof u === "string")
  write({
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: {
      notifications: {
        ...(toolsListChanged ? { toolsListChanged } : {}),
        ...(resources.length > 0 ? { resourceSubscriptions: resources } : {})
      },
      _meta: { [SubscriptionIdKey]: req.id }
    }
  })
  const listener: Listener = { id: req.id, toolsListChanged, resources, write }
  listeners.add(listener)
  await new Promise<void>((resolve) => {
    if (signal.aborted) return resolve()
    signal.addEventListener("abort", () => resolve(), { once: true })
  })
  listeners.delete(listener)
  return undefined
}

/** The modern `notify_changes`: tools list_changed on every listen that asked for it, and an update of each subscribed resource. */
const notifyChanges = (ctx: Context, req: Request): Response => {
  const asked = [...listeners].filter((l) => l.toolsListChanged)
  for (const l of asked) {
    l.write({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { [SubscriptionIdKey]: l.id } } })
  }
  let updates = 0
  for (const l of listeners) {
    for (const uri of l.resources) {
      updates++
      l.write({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri, _meta: { [SubscriptionIdKey]: l.id } } })
    }
  }
  const text = `sent list_changed on ${asked.length} listen(s), ${updates} update(s)`
  return success(req.id, dress(ctx, { content: [{ type: "text", text }] }, false))
}

const callTool = async (ctx: Context, req: Request, meta: Meta, signal: AbortSignal): Promise<Response | undefined> => {
  const params = req.params ?? {}
  const name = params["name"]
  if (typeof name !== "string") return failure(req.id, ErrorCode.InvalidParams, "tools/call needs a name")
  if (name === NotifyChangesTool) return notifyChanges(ctx, req)
  const args = params["arguments"]
  const inputResponses = params["inputResponses"]
  const requestState = params["requestState"]
  const outcome = await Tools.call(ctx, {
    name,
    args: isObject(args) ? args : {},
    served: { era: "modern", version: meta.version },
    signal,
    asking: {
      _tag: "modern",
      declared: isObject(meta.clientCapabilities["elicitation"]),
      inputResponses: isObject(inputResponses) ? inputResponses : undefined,
      requestState: typeof requestState === "string" ? requestState : undefined
    }
  })
  switch (outcome._tag) {
    case "result":
      return success(req.id, dress(ctx, outcome.result, false))
    case "input_required":
      return success(req.id, {
        resultType: "input_required",
        inputRequests: outcome.inputRequests,
        requestState: outcome.requestState,
        _meta: { [ServerInfoKey]: serverInfo(ctx) }
      })
    case "error":
      return failure(req.id, outcome.error.code, outcome.error.message, outcome.error.data)
    case "cancelled":
      return undefined
  }
}

/** Serves a validated modern request; undefined means no reply (cancelled). */
export const handle = async (
  ctx: Context,
  req: Request,
  meta: Meta,
  signal: AbortSignal,
  /** The connection's output, where a stdio connection can carry listen notifications. */
  write?: (m: Message) => void
): Promise<Response | undefined> => {
  const params = req.params ?? {}
  switch (req.method) {
    case "server/discover":
      return discover(ctx, req, signal)
    case "subscriptions/listen":
      return listen(req, write, signal)
    case "tools/list":
      return success(req.id, dress(ctx, { tools: Tools.toolsOf(ctx) }, true))
    case "resources/list":
      return success(req.id, dress(ctx, { resources: Tools.resources }, true))
    case "resources/read": {
      const found = Tools.readResource(ctx, String(params["uri"]))
      return found === undefined
        ? failure(req.id, ErrorCode.InvalidParams, "resource not found", { uri: params["uri"] ?? null })
        : success(req.id, dress(ctx, found, true))
    }
    case "tools/call":
      return callTool(ctx, req, meta, signal)
    default:
      // initialize, ping and the other legacy-only methods included: they do not exist here.
      return failure(req.id, ErrorCode.MethodNotFound, `method not found: ${req.method}`)
  }
}
