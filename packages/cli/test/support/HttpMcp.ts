/**
 * A raw Streamable HTTP client for the daemon's `/mcp`, for tests that must see exact headers and
 * statuses: Node's fetch on 127.0.0.1, bodies read whole (JSON) or event by event (SSE), and a
 * legacy session helper that opens with `initialize` the way a 2025-era host does.
 *
 * Every response body is either read to its end or cancelled, and every open event stream is
 * aborted when its scope closes, so no test leaves a socket behind.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { clientInfo, initializeParams, type LegacyRevision, Modern, modernMeta } from "./Revisions.js"
import type { Message } from "./StdioServe.js"

/** The Accept a conformant client sends on every POST. */
export const AcceptBoth = "application/json, text/event-stream"

/** A response read whole. */
export interface Reply {
  readonly status: number
  readonly headers: Headers
  /** The raw body text. */
  readonly text: string
  /** The body parsed as JSON (a single-event SSE body is unwrapped), or undefined when empty. */
  readonly body: unknown
}

/** One item of an SSE body: an event's data (parsed as JSON) or a comment line. */
export type SseItem =
  | { readonly _tag: "event"; readonly event: string | undefined; readonly id: string | undefined; readonly data: Message }
  | { readonly _tag: "comment"; readonly text: string }

/** An SSE body being read. */
export interface SseReader {
  readonly response: Response
  /** The next item, or undefined once the stream has ended. */
  readonly next: Effect.Effect<SseItem | undefined>
  /** The next event (comments skipped), or undefined once the stream has ended. */
  readonly nextEvent: Effect.Effect<Message | undefined>
  /** Every item up to the end of the stream. */
  readonly rest: Effect.Effect<ReadonlyArray<SseItem>>
  /** Stops reading and closes the connection, as a client that goes away does. */
  readonly abort: Effect.Effect<void>
}

const parseSse = (block: string): SseItem | undefined => {
  const lines = block.split("\n")
  if (lines.every((l) => l.startsWith(":"))) return { _tag: "comment", text: lines.map((l) => l.slice(1).trim()).join("\n") }
  let event: string | undefined
  let id: string | undefined
  const data: Array<string> = []
  for (const line of lines) {
    if (line.startsWith(":")) continue
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "")
    if (field === "event") event = value
    else if (field === "id") id = value
    else if (field === "data") data.push(value)
  }
  if (data.length === 0) return undefined
  return { _tag: "event", event, id, data: JSON.parse(data.join("\n")) as Message }
}

/** Reads `response`'s body as SSE; `controller` is the request's, so abort closes the connection. */
export const sseReader = (response: Response, controller: AbortController): SseReader => {
  const body = response.body
  const reader = body?.getReader()
  const decoder = new TextDecoder()
  let buffered = ""
  let ended = body === null
  const pull = async (): Promise<SseItem | undefined> => {
    for (;;) {
      buffered = buffered.replace(/\r\n/g, "\n")
      const at = buffered.indexOf("\n\n")
      if (at >= 0) {
        const block = buffered.slice(0, at)
        buffered = buffered.slice(at + 2)
        const item = parseSse(block)
        if (item !== undefined) return item
        continue
      }
      if (ended || reader === undefined) return undefined
      try {
        const { done, value } = await reader.read()
        if (done) ended = true
        else buffered += decoder.decode(value, { stream: true })
      } catch {
        ended = true
      }
    }
  }
  const next = Effect.promise(pull)
  const nextEvent: Effect.Effect<Message | undefined> = Effect.flatMap(
    next,
    (item) => item === undefined ? Effect.succeed(undefined) : item._tag === "event" ? Effect.succeed(item.data) : nextEvent
  )
  const rest = Effect.promise(async () => {
    const items: Array<SseItem> = []
    for (let item = await pull(); item !== undefined; item = await pull()) items.push(item)
    return items
  })
  return {
    response,
    next,
    nextEvent,
    rest,
    abort: Effect.sync(() => {
      ended = true
      controller.abort()
    })
  }
}

/** What a POST sends besides its body. */
export interface PostOptions {
  readonly headers?: Readonly<Record<string, string>>
  /** Replaces the default Accept (both types). */
  readonly accept?: string
}

/** The daemon's `/mcp` at `url`. */
export interface Endpoint {
  readonly url: string
  /**
   * A POST, read whole. Strings are sent as they are; anything else as JSON. Interrupting it
   * closes the connection, as a client that goes away does.
   */
  readonly post: (body: unknown, options?: PostOptions) => Effect.Effect<Reply>
  /**
   * A POST whose body is read as a stream of SSE events (a JSON reply becomes a single event).
   * The connection is aborted when the scope closes.
   */
  readonly postStream: (body: unknown, options?: PostOptions) => Effect.Effect<SseReader, never, Scope.Scope>
  /** A GET; an event stream is left open for `sseReader`, anything else read whole. */
  readonly get: (headers?: Readonly<Record<string, string>>) => Effect.Effect<Reply | SseReader, never, Scope.Scope>
  readonly del: (headers?: Readonly<Record<string, string>>) => Effect.Effect<Reply>
  /** Any method, read whole. */
  readonly raw: (method: string, headers?: Readonly<Record<string, string>>, body?: string) => Effect.Effect<Reply>
}

const readWhole = (response: Response): Effect.Effect<Reply> => Effect.promise(() => readWholeNow(response))

const readWholeNow = async (response: Response): Promise<Reply> => {
  const text = await response.text()
  let body: unknown
  if (text.length > 0) {
    if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      const events = text.replace(/\r\n/g, "\n").split("\n\n").map(parseSse).filter((i) => i?._tag === "event")
      body = events.length === 1 ? (events[0] as { data: Message }).data : events.map((e) => (e as { data: Message }).data)
    } else {
      body = JSON.parse(text) as unknown
    }
  }
  return { status: response.status, headers: response.headers, text, body }
}

const encode = (body: unknown): string => (typeof body === "string" ? body : JSON.stringify(body))

/** The endpoint at `url` (the daemon's `info.mcp`). */
export const endpoint = (url: string): Endpoint => {
  const init = (body: unknown, options: PostOptions = {}, signal?: AbortSignal): RequestInit => ({
    method: "POST",
    headers: { "content-type": "application/json", accept: options.accept ?? AcceptBoth, ...options.headers },
    body: encode(body),
    ...(signal !== undefined ? { signal } : {})
  })
  const opened = (request: (signal: AbortSignal) => Promise<Response>) =>
    Effect.acquireRelease(
      Effect.promise(async () => {
        const controller = new AbortController()
        return { controller, response: await request(controller.signal) }
      }),
      ({ controller }) => Effect.sync(() => controller.abort())
    )
  return {
    url,
    // Interrupting a POST aborts its fetch, which closes the connection: how a client goes away.
    post: (body, options) => Effect.promise((signal) => fetch(url, init(body, options, signal)).then(readWholeNow)),
    postStream: (body, options) =>
      Effect.map(opened((signal) => fetch(url, init(body, options, signal))), ({ controller, response }) => sseReader(response, controller)),
    get: (headers = {}) =>
      Effect.flatMap(
        opened((signal) => fetch(url, { method: "GET", headers: { accept: "text/event-stream", ...headers }, signal })),
        ({ controller, response }) =>
          (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
            ? Effect.succeed<Reply | SseReader>(sseReader(response, controller))
            : readWhole(response)
      ),
    del: (headers = {}) => Effect.flatMap(Effect.promise(() => fetch(url, { method: "DELETE", headers: { ...headers } })), readWhole),
    raw: (method, headers = {}, body) =>
      Effect.flatMap(Effect.promise(() => fetch(url, { method, headers: { ...headers }, ...(body !== undefined ? { body } : {}) })), readWhole)
  }
}

/** Whether a GET answered with an event stream. */
export const isStream = (r: Reply | SseReader): r is SseReader => "nextEvent" in r

// ---- modern

/** The mirrored headers of a 2026-07-28 request. */
export const modernHeaders = (method: string, name?: string, version: string = Modern): Record<string, string> => ({
  "mcp-protocol-version": version,
  "mcp-method": method,
  ...(name !== undefined ? { "mcp-name": name } : {})
})

/** A 2026-07-28 request body with a complete `_meta`. */
export const modernBody = (id: string | number, method: string, params: Message = {}, capabilities: Message = {}): Message => ({
  jsonrpc: "2.0",
  id,
  method,
  params: { ...params, _meta: modernMeta(capabilities) }
})

/** The name a request mirrors into `Mcp-Name`, if its method has one. */
const mirroredName = (method: string, params: Message): string | undefined =>
  method === "tools/call" || method === "prompts/get"
    ? String(params.name)
    : method === "resources/read"
    ? String(params.uri)
    : undefined

/** A complete, well-formed 2026-07-28 request: body and headers agree. */
export const modernRequest = (
  http: Endpoint,
  id: string | number,
  method: string,
  params: Message = {},
  capabilities: Message = {}
): Effect.Effect<Reply> => http.post(modernBody(id, method, params, capabilities), { headers: modernHeaders(method, mirroredName(method, params)) })

/** The same, read as a stream (for calls a test cancels by closing it). */
export const modernStream = (
  http: Endpoint,
  id: string | number,
  method: string,
  params: Message = {},
  capabilities: Message = {}
): Effect.Effect<SseReader, never, Scope.Scope> =>
  http.postStream(modernBody(id, method, params, capabilities), { headers: modernHeaders(method, mirroredName(method, params)) })

// ---- legacy

/** The header a legacy session is named by. */
export const SessionHeader = "mcp-session-id"

/** A legacy host with a session minted by `initialize`. */
export interface LegacySession {
  readonly revision: LegacyRevision
  readonly id: string
  /** The headers every later request carries: the session, and from 2025-06-18 the version. */
  readonly headers: Readonly<Record<string, string>>
  readonly initialize: Message
  /** A request in the session, read whole. */
  readonly request: (id: string | number, method: string, params?: Message) => Effect.Effect<Reply>
  /** A request in the session, read as an event stream. */
  readonly stream: (id: string | number, method: string, params?: Message) => Effect.Effect<SseReader, never, Scope.Scope>
  /** Any message (a notification, a response, a batch) in the session. */
  readonly send: (body: unknown, accept?: string) => Effect.Effect<Reply>
}

/** The MCP-Protocol-Version a legacy host sends after initialize (the header arrived in 2025-06-18). */
export const versionHeaders = (revision: LegacyRevision): Record<string, string> => revision >= "2025-06-18" ? { "mcp-protocol-version": revision } : {}

/**
 * Opens a session of `revision`: `initialize` (which must answer that version and mint a session),
 * then `notifications/initialized` in it.
 */
export const openSession = (
  http: Endpoint,
  revision: LegacyRevision,
  capabilities: Message = {}
): Effect.Effect<LegacySession> =>
  Effect.gen(function*() {
    const init = yield* http.post({ jsonrpc: "2.0", id: `init-${revision}`, method: "initialize", params: initializeParams(revision, capabilities) })
    const id = init.headers.get(SessionHeader)
    const body = init.body as Message | undefined
    if (init.status !== 200 || id === null || (body?.result as Message | undefined)?.protocolVersion !== revision) {
      return yield* Effect.dieMessage(`initialize ${revision} was answered ${init.status} ${id} ${init.text}`)
    }
    const headers = { [SessionHeader]: id, ...versionHeaders(revision) }
    const send = (message: unknown, accept?: string) => http.post(message, { headers, ...(accept !== undefined ? { accept } : {}) })
    const initialized = yield* send({ jsonrpc: "2.0", method: "notifications/initialized" })
    if (initialized.status !== 202) return yield* Effect.dieMessage(`notifications/initialized was answered ${initialized.status}`)
    return {
      revision,
      id,
      headers,
      initialize: body as Message,
      request: (rid, method, params = {}) => send({ jsonrpc: "2.0", id: rid, method, params }),
      stream: (rid, method, params = {}) => http.postStream({ jsonrpc: "2.0", id: rid, method, params }, { headers }),
      send
    }
  })

/** A sessionless legacy request of `revision` (no `initialize`; the version header from 2025-06-18). */
export const sessionless = (
  http: Endpoint,
  revision: LegacyRevision,
  id: string | number,
  method: string,
  params: Message = {}
): Effect.Effect<Reply> => http.post({ jsonrpc: "2.0", id, method, params }, { headers: versionHeaders(revision) })

export { clientInfo }
