/**
 * The legacy side of the fixture: `initialize` negotiation, what each odd mode does with a request
 * that arrives before it, and legacy-shaped replies (no resultType, no cache hints).
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Revision from "@mcpx-fx/protocol/Revision"
import { capabilitiesOf, type Context, serverInfo } from "./Context.js"
import type { Mode } from "./Options.js"
import type { LegacySession } from "./Session.js"
import * as Tools from "./Tools.js"
import { failure, isObject, type Message, type Request, type Response, success } from "./Wire.js"

/** What a legacy server does with a request it gets before `initialize`. */
export type PreInit =
  | { readonly _tag: "reply"; readonly response: Response }
  | { readonly _tag: "silent" }
  | { readonly _tag: "exit" }

/** The odd answer to a pre-initialize request, or undefined when the request is served (initialize, ping). */
export const preInit = (mode: Mode, req: Request): PreInit | undefined => {
  if (req.method === "initialize" || req.method === "ping") return undefined
  const refuse = (code: number, message: string): PreInit => ({ _tag: "reply", response: failure(req.id, code, message) })
  switch (mode) {
    case "legacy-silent":
      return { _tag: "silent" }
    case "legacy-exit":
      return { _tag: "exit" }
    case "legacy-32602":
      return refuse(ErrorCode.InvalidParams, `${req.method} before initialize`)
    case "dual":
    case "slow-discover":
      // A dual server reads a request without _meta as legacy, and a legacy one needs initialize first.
      return refuse(ErrorCode.InvalidParams, `${req.method} needs _meta, or initialize first`)
    default:
      return refuse(ErrorCode.MethodNotFound, `method not found: ${req.method}`)
  }
}

/** Newest first: the order a counter-offer is chosen in. */
const newestFirst = (vs: ReadonlyArray<string>): ReadonlyArray<string> => [...vs].sort(Revision.compare).reverse()

const initialize = (ctx: Context, session: LegacySession, req: Request): Response => {
  const params = req.params ?? {}
  const requested = params["protocolVersion"]
  const ours = ctx.options.legacyVersions
  const counter = newestFirst(ours)[0]
  if (counter === undefined) {
    return failure(req.id, ErrorCode.InvalidParams, "no legacy protocol version is supported", {
      supported: [],
      requested: typeof requested === "string" ? requested : null
    })
  }
  const version = typeof requested === "string" && ours.includes(requested) ? requested : counter
  session.version = version
  const caps = params["capabilities"]
  session.clientCapabilities = isObject(caps) ? caps : {}
  return success(req.id, {
    protocolVersion: version,
    capabilities: capabilitiesOf(ctx),
    serverInfo: serverInfo(ctx),
    instructions: `era fixture in mode ${ctx.options.mode}`
  })
}

/**
 * A tool (listed with the others in Tools.ts, answered here): it sends
 * what a server whose lists changed sends, `notifications/tools/list_changed`, and
 * `notifications/resources/updated` for every resource this session subscribed to.
 */
export const NotifyChangesTool = "notify_changes"

// Resource subscriptions by session; a session is one connection or one HTTP session.
const subscribed = new WeakMap<LegacySession, Set<string>>()
const subscriptionsOf = (session: LegacySession): Set<string> => {
  const found = subscribed.get(session)
  if (found !== undefined) return found
  const fresh = new Set<string>()
  subscribed.set(session, fresh)
  return fresh
}

const notifyChanges = (session: LegacySession, req: Request, write: (m: Message) => void): Response => {
  write({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
  const uris = [...subscriptionsOf(session)]
  for (const uri of uris) write({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } })
  return success(req.id, { content: [{ type: "text", text: `sent list_changed and ${uris.length} update(s)` }] })
}

const subscription = (session: LegacySession, req: Request): Response => {
  const uri = req.params?.["uri"]
  if (typeof uri !== "string") return failure(req.id, ErrorCode.InvalidParams, `${req.method} needs a uri`)
  if (req.method === "resources/subscribe") subscriptionsOf(session).add(uri)
  else subscriptionsOf(session).delete(uri)
  return success(req.id, {})
}

const callTool = async (
  ctx: Context,
  session: LegacySession,
  req: Request,
  write: (m: Message) => void,
  signal: AbortSignal
): Promise<Response | undefined> => {
  const params = req.params ?? {}
  const name = params["name"]
  if (typeof name !== "string") return failure(req.id, ErrorCode.InvalidParams, "tools/call needs a name")
  const args = params["arguments"]
  const version = session.version ?? Revision.OldestRevision
  const outcome = await Tools.call(ctx, {
    name,
    args: isObject(args) ? args : {},
    served: { era: "legacy", version },
    signal,
    asking: {
      _tag: "legacy",
      version,
      declared: isObject(session.clientCapabilities["elicitation"]),
      ask: session.asker(write)
    }
  })
  switch (outcome._tag) {
    case "result":
      return success(req.id, outcome.result)
    case "error":
      return failure(req.id, outcome.error.code, outcome.error.message, outcome.error.data)
    case "cancelled":
      return undefined
    case "input_required":
      return failure(req.id, ErrorCode.InternalError, "a legacy call cannot answer input_required")
  }
}

/**
 * Serves one legacy request in `session`. `write` carries server→client requests on the request's
 * own channel (stdout, or the POST's SSE stream). Undefined means no reply: the call was cancelled.
 */
export const handle = async (
  ctx: Context,
  session: LegacySession,
  req: Request,
  write: (m: Message) => void,
  signal: AbortSignal
): Promise<Response | undefined> => {
  const params = req.params ?? {}
  switch (req.method) {
    case "initialize":
      return initialize(ctx, session, req)
    case "ping":
    case "logging/setLevel":
      return success(req.id, {})
    case "tools/list":
      return success(req.id, { tools: Tools.toolsOf(ctx) })
    case "resources/list":
      return success(req.id, { resources: Tools.resources })
    case "resources/read": {
      const found = Tools.readResource(ctx, String(params["uri"]))
      return found === undefined
        ? failure(req.id, ErrorCode.ResourceNotFound, "resource not found", { uri: params["uri"] ?? null })
        : success(req.id, found)
    }
    case "tools/call":
      return params["name"] === NotifyChangesTool ? notifyChanges(session, req, write) : callTool(ctx, session, req, write, signal)
    case "resources/subscribe":
    case "resources/unsubscribe":
      return subscription(session, req)
    default:
      return failure(req.id, ErrorCode.MethodNotFound, `method not found: ${req.method}`)
  }
}
