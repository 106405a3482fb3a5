/**
 * The protocol revisions a host may speak to `mcpx-fx serve`, and how a test host speaks each:
 * a legacy host opens with `initialize`, a 2026-07-28 host puts its version, identity and
 * capabilities in every request's `_meta`.
 */
import * as Effect from "effect/Effect"
import type { Message, Serve } from "./StdioServe.js"

export const Legacy = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const
export type LegacyRevision = (typeof Legacy)[number]
export const Modern = "2026-07-28"
export const All = [...Legacy, Modern] as const
export type Revision = (typeof All)[number]

export const clientInfo = { name: "host-stdio-test", version: "1.0.0" }

/** The per-request `_meta` of a 2026-07-28 request. */
export const modernMeta = (capabilities: Message = {}, extra: Message = {}): Message => ({
  "io.modelcontextprotocol/protocolVersion": Modern,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": clientInfo,
  ...extra
})

/** A host of one revision on a running `mcpx-fx serve`. */
export interface Host {
  readonly revision: Revision
  readonly serve: Serve
  /** The params a request of this host carries: `_meta` added for 2026-07-28, merged with `meta`. */
  readonly params: (params?: Message, meta?: Message) => Message
  /** Sends a request without waiting for its reply. */
  readonly send: (id: string | number, method: string, params?: Message, meta?: Message) => Effect.Effect<void>
  /** Sends a request and waits for its reply. */
  readonly request: (id: string | number, method: string, params?: Message, meta?: Message) => Effect.Effect<Message>
  /** Calls a tool and waits for the reply. */
  readonly call: (id: string | number, tool: string, args?: Message, meta?: Message) => Effect.Effect<Message>
  /** A request the host may always send, answered with an empty or listing result. */
  readonly cheap: (id: string | number) => Effect.Effect<Message>
}

/** The `initialize` request of a legacy host. */
export const initializeParams = (protocolVersion: string, capabilities: Message = {}): Message => ({
  protocolVersion,
  capabilities,
  clientInfo
})

/**
 * Speaks `revision` on `serve`: a legacy host sends `initialize` (and checks the version it got
 * back) and `notifications/initialized`; a modern host has nothing to open.
 */
export const open = (serve: Serve, revision: Revision, capabilities: Message = {}): Effect.Effect<Host> =>
  Effect.gen(function*() {
    if (revision !== Modern) {
      const init = yield* serve.request(`init-${revision}`, "initialize", initializeParams(revision, capabilities))
      const result = init.result as Message | undefined
      if (result?.protocolVersion !== revision) {
        return yield* Effect.dieMessage(`initialize ${revision} was answered ${JSON.stringify(init)}`)
      }
      yield* serve.send({ method: "notifications/initialized" })
    }
    return speaking(serve, revision, capabilities)
  })

/** A host of `revision` that has already opened (or needs no opening). */
export const speaking = (serve: Serve, revision: Revision, capabilities: Message = {}): Host => {
  const params = (p: Message = {}, meta: Message = {}): Message => {
    if (revision === Modern) return { ...p, _meta: modernMeta(capabilities, meta) }
    return Object.keys(meta).length === 0 ? p : { ...p, _meta: meta }
  }
  const send = (id: string | number, method: string, p?: Message, meta?: Message) => serve.send({ id, method, params: params(p, meta) })
  const request = (id: string | number, method: string, p?: Message, meta?: Message) => Effect.zipRight(send(id, method, p, meta), serve.reply(id))
  return {
    revision,
    serve,
    params,
    send,
    request,
    call: (id, tool, args = {}, meta) => request(id, "tools/call", { name: tool, arguments: args }, meta),
    // ping left the client requests in 2026-07-28.
    cheap: (id) => (revision === Modern ? request(id, "server/discover") : request(id, "ping"))
  }
}
