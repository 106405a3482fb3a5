/**
 * One live connection to one upstream, over stdio (a child process) or Streamable HTTP.
 *
 * A connection knows nothing of eras or handshakes: it moves JSON-RPC frames and reports what
 * went wrong in transport terms. Sessions, probing and negotiation are built on top of it.
 * Opening is scoped: closing the scope ends the process (or the HTTP session).
 */
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ServerDefinition } from "../ServerDefinition.js"
import type { AuthError } from "../auth/AuthModel.js"

/**
 * How a request travels on HTTP (ignored by stdio, which has no headers and no sessions).
 * `era: "legacy"` requests carry the connection's legacy session id once one exists; modern ones
 * never do. `headers` are the mirrored modern headers or the legacy MCP-Protocol-Version.
 */
export interface RequestHints {
  readonly era?: "legacy" | "modern"
  readonly headers?: Readonly<Record<string, string>>
  /**
   * Who the request is for, when it listens for what is said about it. On a shared channel
   * (stdio, the HTTP+SSE GET stream) a log message that names no request goes to the requests in
   * flight only when they are all one caller's (internal/Waiting.ts).
   */
  readonly caller?: unknown
}

/**
 * `hints` naming `caller`. The caller goes in before the copy, not after it: a key added after a
 * spread is V8's slow path (docs/performance.md), and every call that listens is sent this way.
 */
export const hintsWithCaller = (hints: RequestHints, caller: unknown): RequestHints => {
  const out: { -readonly [K in keyof RequestHints]: RequestHints[K] } = { caller, ...hints }
  out.caller = caller
  return out
}

/** One upstream connection. */
export interface Connection {
  /**
   * Sends a request and streams what the upstream says about it: notifications and
   * server→client requests tied to it (on HTTP, the events of its POST's response stream; on
   * stdio, progress for its progress token), then its response, after which the stream ends.
   * Interrupting the stream before the response cancels the request upstream:
   * `notifications/cancelled` on stdio and legacy HTTP sessions, closing the POST on modern HTTP.
   */
  readonly request: (
    request: JsonRpc.Request,
    hints?: RequestHints
  ) => Stream.Stream<JsonRpc.Parsed, TransportError>
  /**
   * `request` for callers that only want the answer: the tied messages go to `onMessage` in
   * order, and the response is the result (undefined when the upstream ended the exchange
   * without one). Same cancellation on interruption as `request`. It exists because a Stream per
   * call costs more than the rest of a stdio round trip; a transport without a cheaper way
   * builds it from `request` with `callThroughStream`.
   */
  readonly call: (
    request: JsonRpc.Request,
    onMessage: (parsed: JsonRpc.Parsed) => Effect.Effect<void>,
    hints?: RequestHints
  ) => Effect.Effect<JsonRpc.Response | undefined, TransportError>
  /** Sends a notification. */
  readonly notify: (notification: JsonRpc.Notification, hints?: RequestHints) => Effect.Effect<void, TransportError>
  /** Answers a server→client request. */
  readonly respond: (response: JsonRpc.Response, hints?: RequestHints) => Effect.Effect<void, TransportError>
  /**
   * Messages tied to no request: stdio lines that answer nothing pending, events of the legacy
   * GET stream. Single consumer; it ends when the connection closes.
   */
  readonly unsolicited: Stream.Stream<JsonRpc.Parsed>
  /**
   * Completes with the reason once the connection is closed (process exit, scope closed, HTTP
   * connection lost). A legacy HTTP session the server forgot is not a closed connection: that is
   * `SessionExpired` on the request, and the caller may re-initialize on the same connection.
   */
  readonly closed: Effect.Effect<TransportClosed>
  /**
   * stdio only: when the process last wrote anything on stdout (ms since the epoch), so a server
   * that went silent under its calls can be told from a slow one (the Pool pings it).
   */
  readonly heardAt?: () => number
  /** The last few KiB the upstream wrote on stderr (stdio only; empty for HTTP). */
  readonly stderrTail: Effect.Effect<string>
  /**
   * Legacy HTTP only: opens the session's GET stream so unsolicited notifications arrive.
   * A no-op on stdio and where the server offers no stream (405).
   */
  readonly openNotificationStream: Effect.Effect<void, TransportError>
  /** Which wire this connection uses, for the era record. */
  readonly wire: "stdio" | "streamable-http" | "http+sse"
  /**
   * Streamable HTTP only: the `Mcp-Session-Id` the server gave the legacy session, read when a
   * request's span is ended (`mcp.session.id`); it changes when the session is initialized again.
   */
  readonly sessionId?: Effect.Effect<string | undefined>
  /**
   * Whether `call` ends its wait for the answer when the call running in place in its fiber is
   * cut (internal/InPlace.ts), so the Pool may run a call on it without a fiber of its own.
   */
  readonly cutsInPlace?: boolean
}

/** `Connection["call"]` on top of a transport's `request` stream. */
export const callThroughStream = (request: Connection["request"]): Connection["call"] => (req, onMessage, hints) =>
  Effect.suspend(() => {
    let response: JsonRpc.Response | undefined
    return request(req, hints).pipe(
      Stream.runForEach((parsed) => {
        const m = parsed.message
        if (JsonRpc.isResponse(m)) {
          response = m
          return Effect.void
        }
        return onMessage(parsed)
      }),
      Effect.map(() => response)
    )
  })

/** The upstream answered an HTTP request with a non-2xx status that carried no matching JSON-RPC response. */
export class HTTPStatusError extends Schema.TaggedError<HTTPStatusError>("@mcpx-fx/upstream/HTTPStatusError")(
  "HTTPStatusError",
  {
    status: Schema.Number,
    body: Schema.String,
    /** The JSON-RPC error the body carried, if any (e.g. an id-less -32020). */
    rpcError: Schema.optional(Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Schema.Unknown) }))
  }
) {
  override get message(): string {
    const rpc = this.rpcError !== undefined ? ` (JSON-RPC ${this.rpcError.code}: ${this.rpcError.message})` : ""
    return `upstream answered HTTP ${this.status}${rpc}${this.body.length > 0 ? `: ${this.body.slice(0, 200)}` : ""}`
  }
}

/**
 * `initialize` was refused with a bare 400, 404 or 405: the endpoint is not Streamable HTTP at
 * all, and the caller may fall back to the 2024-11-05 HTTP+SSE transport.
 */
export class LegacyHTTPRefusedError extends Schema.TaggedError<LegacyHTTPRefusedError>(
  "@mcpx-fx/upstream/LegacyHTTPRefusedError"
)("LegacyHTTPRefusedError", { status: Schema.Number }) {
  override get message(): string {
    return `upstream refused initialize over Streamable HTTP with a bare HTTP ${this.status}`
  }
}

/** The legacy HTTP session the request named is gone (404): the caller re-initializes once. */
export class SessionExpired extends Schema.TaggedError<SessionExpired>("@mcpx-fx/upstream/SessionExpired")(
  "SessionExpired",
  { sessionId: Schema.String }
) {
  override get message(): string {
    return `upstream no longer knows session ${this.sessionId}`
  }
}

/** The connection is closed: the process exited, the connection failed, or the scope ended. */
export class TransportClosed extends Schema.TaggedError<TransportClosed>("@mcpx-fx/upstream/TransportClosed")(
  "TransportClosed",
  {
    reason: Schema.String,
    exitCode: Schema.optional(Schema.NullOr(Schema.Number)),
    signal: Schema.optional(Schema.NullOr(Schema.String)),
    stderrTail: Schema.optional(Schema.String)
  }
) {
  override get message(): string {
    const exit = this.exitCode !== undefined && this.exitCode !== null ? ` (exit code ${this.exitCode})` : ""
    const signal = this.signal !== undefined && this.signal !== null ? ` (signal ${this.signal})` : ""
    const tail = this.stderrTail !== undefined && this.stderrTail.length > 0 ? `; stderr: ${this.stderrTail.trim()}` : ""
    return `${this.reason}${exit}${signal}${tail}`
  }
}

/** The upstream wrote a line (or an SSE event) larger than the configured cap. */
export class FrameTooLarge extends Schema.TaggedError<FrameTooLarge>("@mcpx-fx/upstream/FrameTooLarge")(
  "FrameTooLarge",
  { limit: Schema.Number }
) {
  override get message(): string {
    return `upstream sent a frame larger than ${this.limit} bytes`
  }
}

/** Everything a connection can fail with. */
export type TransportError =
  | HTTPStatusError
  | LegacyHTTPRefusedError
  | SessionExpired
  | TransportClosed
  | FrameTooLarge
  | AuthError

/** Opens connections to upstreams. */
export class Transport extends Context.Tag("@mcpx-fx/upstream/Transport")<
  Transport,
  {
    /**
     * Opens a connection. `wire: "http+sse"` asks an HTTP definition for the deprecated 2024-11-05
     * HTTP+SSE transport instead of Streamable HTTP (the Prober's fallback, or a cached choice).
     */
    readonly open: (
      def: ServerDefinition,
      options?: { readonly wire?: "http+sse" }
    ) => Effect.Effect<Connection, TransportError, Scope.Scope>
  }
>() {}
