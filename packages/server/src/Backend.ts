/**
 * The port the host-facing Server asks for everything it does not answer itself: listings, calls,
 * prompts, resources and completion. The gateway implements it; declaring it here keeps `server`
 * free of `gateway` and `upstream`, so the protocol core can be tested against a fake.
 *
 * Results are raw JSON objects, unknown fields intact: shaping them for the caller's revision is
 * the Server's job, and what the Backend cannot do is said with the typed errors below, never with
 * JSON-RPC codes (those are decided in one place, `Server.errorObject`).
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import type { LoggingLevel } from "@mcpx-fx/protocol/Meta"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import type { TaskSupport } from "@mcpx-fx/protocol/Tasks"
import type { Implementation } from "@mcpx-fx/protocol/Implementation"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"

/** A question a call needs answered by the host: the method and params of a server→client request. */
export interface Question {
  readonly method: string
  readonly params: JsonObject
}

/** The host could not answer a question; the Backend turns it into an error for the upstream. */
export class QuestionRefused extends Data.TaggedError("QuestionRefused")<{
  readonly code: number
  readonly message: string
}> {}

/**
 * Asks the host that made this call a question (elicitation, sampling, roots). Only a legacy host
 * on a bidirectional channel has one; a modern host is asked through `input_required` instead.
 */
export type QuestionChannel = (question: Question) => Effect.Effect<JsonObject, QuestionRefused>

/** Sends one notification about a call to the host that made it. */
export type NotificationChannel = (notification: JsonRpc.Notification) => Effect.Effect<void>

/**
 * What the Backend made of a called tool's name for one request, when its `Mcp-Param-*` headers
 * were checked (HttpHost's SchemaLookup): the Server reads its input schema and hands the rest back
 * with the call (`Caller.resolved`), opaque, so the name is not resolved a second time.
 */
export interface ResolvedTool {
  /** The tool's `inputSchema` (undefined when it declares none). */
  readonly inputSchema: unknown
}

/** Who is asking: everything a Backend may know about the caller of one request. */
export interface Caller {
  /** The revision the request is served under (negotiated, or the request's own `_meta`). */
  readonly revision: Revision.Revision
  readonly era: Revision.Era
  /** The capabilities the client declared: at `initialize` (legacy) or in this request's `_meta` (modern). */
  readonly clientCapabilities: JsonObject
  readonly clientInfo?: Implementation
  /**
   * The caller's session identity: `_meta["dev.mcpx/session"]`, a host's own session id such as
   * `_meta["ai.opencode/sessionID"]`, or the legacy session (connection) id. Absent for a modern
   * request that names none: such a request is its own call scope.
   */
  readonly sessionId?: string
  /** Asks the host questions on behalf of this call, when the transport can. */
  readonly questions?: QuestionChannel
  /**
   * Whether `questions` is the connection's (stdio), which can still ask after the request has
   * answered, rather than the request's own stream (an HTTP POST's), which cannot.
   */
  readonly connectionQuestions?: boolean
  /**
   * Tells the host something about this call while it runs — progress, log messages — on the
   * channel its answer will come on (stdio, or the SSE stream of its POST). Absent: the transport
   * cannot, and such notifications are dropped.
   */
  readonly notify?: NotificationChannel
  /**
   * The lowest level of log messages the host wants for this call: a modern request's `_meta`
   * logLevel, a legacy connection's `logging/setLevel` (all of them before any). Absent: none.
   */
  readonly logLevel?: LoggingLevel
  /**
   * A modern retry of an `input_required` call (`tools/call`, `prompts/get`, `resources/read`): the
   * answers and the state the earlier result handed out, as the caller sent them.
   */
  readonly retry?: InputRetry
  /**
   * Told when the upstream makes this call a task of its own: the call will run on, so HostTasks
   * makes it the host's task at once instead of waiting for `tasks.after`.
   */
  readonly onTask?: Effect.Effect<void>
  /**
   * The Backend's own resolution of the tool this request calls, made for this request's header
   * check by the same caller (its `_meta` and session) and handed back unchanged. It belongs to
   * this request's round alone: whatever keeps a Caller for later rounds (HostTasks) drops it, so
   * each of those is resolved, and held to the tool filters, anew. Absent: the Backend resolves.
   */
  readonly resolved?: ResolvedTool | undefined
}

/** The MRTR retry fields of a modern request. */
export interface InputRetry {
  readonly inputResponses?: JsonObject
  readonly requestState?: string
}

/** A server that could not be listed, shown beside the others' results. */
export interface ListingFailure {
  readonly server: string
  readonly message: string
}

/** An aggregated listing: every item that could be had, and who failed. */
export interface Listing {
  readonly items: ReadonlyArray<JsonObject>
  readonly failures: ReadonlyArray<ListingFailure>
}

/** A tool, prompt, resource or server name nobody offers; `suggestions` are the closest known names. */
export class UnknownName extends Schema.TaggedError<UnknownName>("@mcpx-fx/server/UnknownName")("UnknownName", {
  kind: Schema.Literal("tool", "prompt", "resource", "server"),
  name: Schema.String,
  suggestions: Schema.Array(Schema.String)
}) {
  override get message(): string {
    const hint = this.suggestions.length > 0 ? `; did you mean ${this.suggestions.join(", ")}?` : ""
    return `Unknown ${this.kind} ${JSON.stringify(this.name)}${hint}`
  }
}

/** An upstream answered with a JSON-RPC error; its code, message and data are relayed. */
export class UpstreamError extends Schema.TaggedError<UpstreamError>("@mcpx-fx/server/UpstreamError")("UpstreamError", {
  server: Schema.String,
  method: Schema.String,
  code: Schema.Number,
  rpcMessage: Schema.String,
  data: Schema.optionalWith(Schema.Unknown, { exact: true })
}) {
  override get message(): string {
    return this.rpcMessage
  }
}

/** A call ran past its time limit and was cancelled upstream. */
export class CallTimedOut extends Schema.TaggedError<CallTimedOut>("@mcpx-fx/server/CallTimedOut")("CallTimedOut", {
  server: Schema.String,
  method: Schema.String,
  timeoutMs: Schema.Number
}) {
  override get message(): string {
    return `${this.server} did not answer ${this.method} within ${this.timeoutMs}ms; the call was cancelled`
  }
}

/** The call needs a client capability this request did not declare (e.g. elicitation). */
export class CapabilityRequired extends Schema.TaggedError<CapabilityRequired>("@mcpx-fx/server/CapabilityRequired")(
  "CapabilityRequired",
  { requiredCapabilities: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }
) {
  override get message(): string {
    return `This call needs the client capabilities ${Object.keys(this.requiredCapabilities).join(", ")}`
  }
}

/**
 * A call's questions could not go on: a retry naming a call that has ended or a round already
 * answered, answers that do not fit their questions (`clientError`), or a bound such as the number
 * of rounds or of calls waiting for answers (not the caller's fault).
 */
export class InputRefused extends Schema.TaggedError<InputRefused>("@mcpx-fx/server/InputRefused")("InputRefused", {
  reason: Schema.String,
  detail: Schema.String,
  clientError: Schema.Boolean
}) {
  override get message(): string {
    return this.detail
  }
}

/** The upstream could not be reached or failed outside JSON-RPC (start failure, closed transport, …). */
export class BackendUnavailable extends Schema.TaggedError<BackendUnavailable>("@mcpx-fx/server/BackendUnavailable")(
  "BackendUnavailable",
  { server: Schema.optionalWith(Schema.String, { exact: true }), reason: Schema.String }
) {
  override get message(): string {
    return this.server === undefined ? this.reason : `${this.server}: ${this.reason}`
  }
}

/** The process is stopping and the call was cut short after the grace (answered -32603, `data.reason: "shutdown"`). */
export class ShuttingDown extends Schema.TaggedError<ShuttingDown>("@mcpx-fx/server/ShuttingDown")("ShuttingDown", {}) {}

/**
 * Something a host may be told about: one of the aggregated lists changed, or a resource was
 * updated. The `uri` is in the host's form (the gateway's `mcpx://<namespace>/<uri>`), the one the
 * host listed, read and subscribed with.
 */
export const Change = Schema.Union(
  Schema.TaggedStruct("ToolsListChanged", {}),
  Schema.TaggedStruct("PromptsListChanged", {}),
  Schema.TaggedStruct("ResourcesListChanged", {}),
  Schema.TaggedStruct("ResourceUpdated", { uri: Schema.String })
)
/** A list change or a resource update, for delivery to hosts. */
export type Change = typeof Change.Type

/** Everything a Backend call can fail with. */
export type BackendError =
  | UnknownName
  | UpstreamError
  | CallTimedOut
  | CapabilityRequired
  | BackendUnavailable
  | InputRefused
  | ShuttingDown

/**
 * The Server's view of the gateway. `meta` is the request's `_meta` without the protocol's own
 * per-request keys (those describe the host→mcpx-fx hop, not the upstream one): a progress token
 * and third-party keys travel on. Results are passed back as the upstream gave them.
 */
export class Backend extends Context.Tag("@mcpx-fx/server/Backend")<Backend, {
  readonly listTools: (caller: Caller) => Effect.Effect<Listing>
  readonly listPrompts: (caller: Caller) => Effect.Effect<Listing>
  readonly listResources: (caller: Caller) => Effect.Effect<Listing>
  readonly listResourceTemplates: (caller: Caller) => Effect.Effect<Listing>
  readonly callTool: (caller: Caller, name: string, args: JsonObject, meta?: JsonObject) => Effect.Effect<JsonObject, BackendError>
  readonly getPrompt: (caller: Caller, name: string, args: JsonObject, meta?: JsonObject) => Effect.Effect<JsonObject, BackendError>
  readonly readResource: (caller: Caller, uri: string, meta?: JsonObject) => Effect.Effect<JsonObject, BackendError>
  /** `completion/complete`, params as sent (`ref`, `argument`, `context`); routing by `ref` is the Backend's. */
  readonly complete: (caller: Caller, params: JsonObject, meta?: JsonObject) => Effect.Effect<JsonObject, BackendError>
  /**
   * A subscription to every change from now on: in place once this returns (so nothing published
   * after it is missed), ended with the scope. Every host connection takes its own and filters it
   * (legacy: what it was declared and subscribed to; modern: its `subscriptions/listen` filter).
   * Absent: the Backend's lists never change, and nothing may declare `listChanged`.
   */
  readonly changes?: Effect.Effect<Queue.Dequeue<Change>, never, Scope.Scope>
  /**
   * Asks the owner of `uri` (the host's form) for `ResourceUpdated` changes about it, for as long
   * as the scope lasts; several overlapping watches of one URI are the Backend's to count. Absent:
   * resources cannot be subscribed to.
   */
  readonly watchResource?: (caller: Caller, uri: string) => Effect.Effect<void, BackendError, Scope.Scope>
  /**
   * Whether a tool can run as a task (its upstream's `execution.taskSupport`, which the Backend
   * honours whatever the host speaks): such a call becomes a host's task at once. Unknown names
   * are "forbidden" (the call reports them). Absent: no tool is, and calls become tasks only by
   * outlasting `tasks.after`.
   */
  readonly taskSupport?: (caller: Caller, name: string) => Effect.Effect<TaskSupport>
  /**
   * The caller will not answer the `input_required` whose state this is (its task was cancelled):
   * what the Backend holds for it (a pending call's upstream request, waiting on its questions)
   * ends now, cancelled upstream, rather than when it would have expired. Absent: nothing is held.
   */
  readonly abandon?: (caller: Caller, requestState: string) => Effect.Effect<void>
}>() {}
