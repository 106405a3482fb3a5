/**
 * The host-facing protocol core, transport-free: one decoded JSON-RPC message in, at most one
 * response out, for both eras on the same connection.
 *
 * - A request whose `_meta` claims a protocol version is modern: its `_meta` is validated on its
 *   own (nothing is inferred from earlier requests), its caller is built from that `_meta` alone,
 *   and its result gets the modern envelope.
 * - Anything else is legacy and is served under the connection's negotiated revision; before any
 *   `initialize`, under the transport's sessionless revision or else the oldest one, because a
 *   dual-era server accepts liberally and a modern client never sends `initialize` at all.
 * - Every failure becomes a JSON-RPC error in `errorObject`, the one place codes are chosen.
 *
 * Transports (stdio, Streamable HTTP) own framing, batching, headers, cancellation and concurrency;
 * the per-connection negotiated state lives in a `Connection` they create and pass in.
 */
import * as Capabilities from "@mcpx-fx/protocol/Capabilities"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Lifecycle from "@mcpx-fx/protocol/Lifecycle"
import * as Meta from "@mcpx-fx/protocol/Meta"
import * as Method from "@mcpx-fx/protocol/Method"
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as Shape from "@mcpx-fx/protocol/Shape"
import * as TasksExtension from "@mcpx-fx/protocol/TasksExtension"
import * as Tracing from "@mcpx-fx/protocol/Tracing"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { Backend, type BackendError, type Caller, CapabilityRequired, type InputRetry } from "./Backend.js"
import { HostTasks, ownerOf } from "./HostTasks.js"
import type { Connection, Negotiated, RequestContext } from "./internal/ServerConnection.js"
import * as ServerFeatures from "./internal/ServerFeatures.js"
import { DefaultOptions, type ServerOptions } from "./internal/ServerOptions.js"
import * as ServerSpans from "./internal/ServerSpans.js"
import * as ServerTasks from "./internal/ServerTasks.js"
import * as TaskNotices from "./internal/TaskNotices.js"
import * as RequestState from "./RequestState.js"
import * as Subscriptions from "./Subscriptions.js"
import { AlreadyInitialized, errorObject, type HandleError, InvalidParams, MethodNotFound, UnshapeableResult } from "./ServerErrors.js"
import { decodeParams, notifying, retryOf, sessionIdentity } from "./internal/ServerParams.js"

export { forwardMeta, notifying, OpencodeSessionKey, sessionIdentity, SessionIdentityKeys, SessionKey } from "./internal/ServerParams.js"
export { type Connection, makeConnection, type Negotiated, negotiatedRevision, type RequestContext } from "./internal/ServerConnection.js"

export { ListingFailuresKey } from "./internal/ServerFeatures.js"

export { DefaultOptions, type ServerOptions } from "./internal/ServerOptions.js"

// ---------------------------------------------------------------------------------------------
// The service

/** The host-facing protocol core. */
export class Server extends Context.Tag("@mcpx-fx/server/Server")<Server, {
  readonly options: ServerOptions
  /**
   * Handles one decoded message: a response for a request, undefined for notifications and for
   * responses (those answer questions; the transport routes them). Never fails: every failure is
   * an error response. Interruption is left alone, so a transport's cancellation reaches the call.
   */
  readonly handle: (message: JsonRpc.Message, context: RequestContext) => Effect.Effect<JsonRpc.Response | undefined>
  /**
   * Tells a legacy connection of its own tasks' changes (`notifications/tasks/status`, once it is
   * initialized under 2025-11-25) with `send`, for as long as the current scope lasts.
   */
  readonly followTasks: (connection: Connection, send: (n: JsonRpc.Notification) => Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
}>() {
  /**
   * The Server with `DefaultOptions`, over a Backend. Its `requestState`s are sealed and opened
   * with the RequestState given: one per process, so every host of it (stdio, HTTP) opens the
   * others' (`RequestState.layer` mints a key of its own).
   */
  static readonly layer: Layer.Layer<Server, never, Backend | HostTasks | RequestState.RequestState> = Layer.effect(
    Server,
    Effect.suspend(() => make(DefaultOptions))
  )

  /** The Server with the given options, over a Backend and a RequestState. */
  static readonly layerWith = (options: ServerOptions): Layer.Layer<Server, never, Backend | HostTasks | RequestState.RequestState> =>
    Layer.effect(Server, Effect.suspend(() => make(options)))
}

const make = (options: ServerOptions) =>
  Effect.gen(function*() {
    const backend = yield* Backend
    const tasks = yield* HostTasks
    // Read once: a process that does not trace pays nothing per request for the choice.
    const tracing = yield* Tracing.Tracing
    const requestState = yield* RequestState.RequestState

    /**
     * The retry as the Backend must see it: mcpx-fx's own state checked against this very request
     * and swapped for the upstream's state it carries (none if the upstream gave none). Every
     * `input_required` mcpx-fx answers carries its state, so answers without one belong to no
     * round of its own: the request is a first call, and is resolved and filtered as one.
     */
    const openRetry = (method: string, params: JsonObject, retry: InputRetry) =>
      retry.requestState === undefined
        ? Effect.succeed(undefined)
        : Effect.map(requestState.open(retry.requestState, { method, params }), (opened): InputRetry | undefined =>
          retry.inputResponses === undefined && opened.inner === undefined ? undefined : {
            ...(retry.inputResponses === undefined ? {} : { inputResponses: retry.inputResponses }),
            ...(opened.inner === undefined ? {} : { requestState: opened.inner })
          })

    /** An `input_required` result leaves with mcpx-fx's signed state in place of the upstream's. */
    const sealInputRequired = (method: string, params: JsonObject, result: JsonObject) =>
      Effect.map(
        requestState.seal({
          method,
          params,
          ...(typeof result.requestState === "string" ? { inner: result.requestState } : {})
        }),
        (sealed): JsonObject => ({ ...result, requestState: sealed })
      )

    const serverTasks = ServerTasks.make({ backend, tasks, sealInputRequired })
    const taskFeed = TaskNotices.makeLegacyFeed(tasks, options.capabilities)

    const feature = ServerFeatures.make(backend)

    const capabilitiesFor = (revision: Revision.Revision): JsonObject => Capabilities.serverCapabilitiesFor(revision, options.capabilities)

    // ---- modern

    // Subscriptions chooses no codes: its refusals are told here as the Server's own failures.
    const subscription = <A>(method: string, effect: Effect.Effect<A, Subscriptions.SubscriptionRefused | BackendError>) =>
      Effect.catchTag(effect, "SubscriptionRefused", (e): Effect.Effect<never, InvalidParams | MethodNotFound> =>
        Effect.fail(e.reason === "invalid-params" ? new InvalidParams({ detail: e.detail }) : new MethodNotFound({ method, detail: e.detail })))

    /**
     * A modern request: its envelope checked, then the feature. Written without Effect.gen, as
     * what runs on every call: the checks are plain values, and only the retry, the feature and
     * the sealing of an `input_required` are effects.
     */
    const modern = (request: JsonRpc.Request, context: RequestContext): Effect.Effect<JsonObject, HandleError> => {
      const params = request.params ?? {}
      const checked = Meta.validateRequestMeta(params, Revision.ModernRevisions)
      if (Either.isLeft(checked)) {
        return Effect.fail(checked.left)
      }
      const meta = checked.right
      const revision = meta[Meta.ProtocolVersionKey]
      if (!Revision.isModernRevision(revision)) {
        return Effect.fail(new Meta.UnsupportedProtocolVersion({ supported: Revision.ModernRevisions, requested: revision }))
      }
      const method = request.method
      if (Method.LegacyOnlyClientRequests.includes(method) || Method.TasksRemovedByExtension.includes(method)) {
        return Effect.fail(new MethodNotFound({ method, detail: `${method} is not part of ${revision}` }))
      }
      const tasksDeclared = TasksExtension.declared(meta[Meta.ClientCapabilitiesKey])
      if (Method.isTasksExtensionRequest(method)) {
        return tasksDeclared
          ? serverTasks.modernRequest(method, params, modernCaller(revision, meta, params, undefined, context))
          : Effect.fail(new CapabilityRequired({ requiredCapabilities: TasksExtension.requiredCapabilities }))
      }
      if (!Method.isClientRequestIn(revision, method)) {
        return Effect.fail(new MethodNotFound({ method, detail: `${method} is not served to ${revision} callers` }))
      }
      if (method === Method.ServerDiscover) {
        return Effect.succeed(Lifecycle.discoverResult({
          supportedVersions: Revision.ModernRevisions,
          capabilities: capabilitiesFor(revision),
          serverInfo: options.serverInfo,
          ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
          ttlMs: options.discoverTtlMs,
          cacheScope: options.discoverCacheScope
        }))
      }
      const shaped = (result: JsonObject) =>
        Shape.toModern(result, method, {
          ttlMs: options.listTtlMs,
          cacheScope: options.listCacheScope,
          serverInfo: options.serverInfo
        })
      const run = (retry: InputRetry | undefined): Effect.Effect<JsonObject, HandleError> => {
        const caller = modernCaller(revision, meta, params, retry, context)
        if (method === Method.SubscriptionsListen) {
          return subscription(method, Subscriptions.listen(backend, tasks, options.capabilities, caller, request.id, params, context.subscriptions))
        }
        // A retry too: an upstream may make the last round of its questions a task.
        if (tasksDeclared && method === Method.ToolsCall) {
          return serverTasks.modernCall(caller, params, shaped)
        }
        return Effect.flatMap(feature(caller, method, params), (result) =>
          Shape.resultTypeOf(result) !== "input_required"
            ? Effect.succeed(shaped(result))
            : Effect.map(sealInputRequired(method, params, result), shaped))
      }
      if (!Method.allowsInputRequired(method)) {
        return run(undefined)
      }
      // Read in place: a first round (nearly every call) runs at once.
      const sent = retryOf(params)
      if (Either.isLeft(sent)) {
        return Effect.fail(sent.left)
      }
      return sent.right === undefined ? run(undefined) : Effect.flatMap(openRetry(method, params, sent.right), run)
    }

    /** The caller of a modern request, built from its `_meta` alone. */
    const modernCaller = (
      revision: Revision.ModernRevision,
      meta: Meta.RequestMeta,
      params: JsonObject,
      retry: InputRetry | undefined,
      context: RequestContext
    ): Caller => {
      const sessionId = sessionIdentity(params)
      const clientInfo = meta[Meta.ClientInfoKey]
      return {
        revision,
        era: "modern",
        clientCapabilities: meta[Meta.ClientCapabilitiesKey],
        ...(clientInfo !== undefined ? { clientInfo } : {}),
        ...(sessionId !== undefined ? { sessionId } : {}),
        ...(retry !== undefined ? { retry } : {}),
        ...notifying(context.notify, meta[Meta.LogLevelKey]),
        // Set only by a tools/call's header check, for this request's call.
        resolved: context.resolved
      }
    }

    // ---- legacy

    const initialize = (
      params: JsonObject,
      context: RequestContext
    ): Effect.Effect<JsonObject, InvalidParams | AlreadyInitialized> =>
      Effect.gen(function*() {
        const init = yield* decodeParams(Lifecycle.InitializeParams, params)
        // A version mcpx-fx does not speak gets its newest legacy one as the counter-offer; the
        // client decides whether it can live with that.
        const revision = Revision.isLegacyRevision(init.protocolVersion) ? init.protocolVersion : Revision.LatestLegacyRevision
        const negotiated: Negotiated = {
          revision,
          clientCapabilities: init.capabilities,
          clientInfo: init.clientInfo,
          initialized: false
        }
        const previous = yield* Ref.modify(
          context.connection.negotiated,
          (current): readonly [Option.Option<Negotiated>, Option.Option<Negotiated>] =>
            Option.isSome(current) ? [current, current] : [current, Option.some(negotiated)]
        )
        // The negotiated revision decides the shape of every later reply, so it is settled once.
        if (Option.isSome(previous)) {
          return yield* new AlreadyInitialized({ revision: previous.value.revision })
        }
        const result: JsonObject = {
          protocolVersion: revision,
          capabilities: capabilitiesFor(revision),
          serverInfo: options.serverInfo,
          ...(options.instructions !== undefined ? { instructions: options.instructions } : {})
        }
        return Shape.downgrade(result, Method.Initialize, revision)
      })

    // Without Effect.gen, as `modern`: only the negotiated state and the feature are effects.
    const legacy = (request: JsonRpc.Request, context: RequestContext): Effect.Effect<JsonObject, HandleError> => {
      const params = request.params ?? {}
      const method = request.method
      // A modern-only method without its envelope is a modern request missing required _meta,
      // which is -32602 (what the conformance suite expects), not a legacy unknown method.
      if (method === Method.ServerDiscover || method === Method.SubscriptionsListen) {
        return Either.match(Meta.parseRequestMeta(params), {
          onLeft: (e) =>
            Effect.fail(e),
          onRight: () =>
            Effect.fail(new MethodNotFound({ method, detail: `${method} needs a modern _meta` }))
        })
      }
      if (method === Method.Initialize) {
        return initialize(params, context)
      }
      return Effect.flatMap(Ref.get(context.connection.negotiated), (current): Effect.Effect<JsonObject, HandleError> => {
        const negotiated = Option.getOrUndefined(current)
        const revision = negotiated?.revision ?? context.legacyRevision ?? Revision.OldestRevision
        if (!Method.isClientRequestIn(revision, method)) {
          return Effect.fail(new MethodNotFound({ method, detail: `${method} is not part of ${revision}` }))
        }
        switch (method) {
          case Method.Ping:
            return Effect.succeed({})
          case Method.LoggingSetLevel:
            return Effect.flatMap(decodeParams(Schema.Struct({ level: Meta.LoggingLevel }), params), (level) =>
              Effect.as(Ref.update(context.connection.negotiated, Option.map((n) => ({ ...n, logLevel: level.level }))), {}))
        }
        const sessionId = sessionIdentity(params) ?? context.connection.id
        const caller: Caller = {
          revision,
          era: "legacy",
          clientCapabilities: negotiated?.clientCapabilities ?? {},
          ...(negotiated !== undefined ? { clientInfo: negotiated.clientInfo } : {}),
          sessionId,
          ...(context.questions !== undefined ? { questions: context.questions } : {}),
          ...(context.connectionQuestions === true ? { connectionQuestions: true } : {}),
          ...notifying(context.notify, negotiated?.logLevel ?? "debug")
        }
        if (method === Method.ResourcesSubscribe || method === Method.ResourcesUnsubscribe) {
          return subscription(method, Subscriptions.resourceRequest(backend, options.capabilities, caller, method, params, context.subscriptions))
        }
        if (Method.LegacyTaskClientRequests.includes(method)) {
          return serverTasks.legacyRequest(method, params, caller)
        }
        const shaped = (result: JsonObject): Effect.Effect<JsonObject, HandleError> =>
          Shape.resultTypeOf(result) !== "complete"
            ? Effect.fail(new UnshapeableResult({ detail: `${method} ended as ${Shape.resultTypeOf(result)}, which ${revision} cannot carry` }))
            : Effect.succeed(Shape.downgrade(result, method, revision))
        if (method === Method.ToolsCall && isJsonObject(params.task)) {
          return Effect.zipRight(taskFeed.claim(context.connection, ownerOf(caller)), serverTasks.legacyCall(caller, params, shaped))
        }
        if (method === Method.ToolsList && revision === "2025-11-25") {
          return Effect.map(feature(caller, method, params), ServerTasks.taskListing)
        }
        return Effect.flatMap(feature(caller, method, params), shaped)
      })
    }

    const notification = (n: JsonRpc.Notification, context: RequestContext): Effect.Effect<void> =>
      n.method === Method.Initialized
        ? Ref.update(context.connection.negotiated, Option.map((s) => ({ ...s, initialized: true })))
        : Effect.void

    const handle = (message: JsonRpc.Message, context: RequestContext): Effect.Effect<JsonRpc.Response | undefined> => {
      if (!JsonRpc.isRequest(message)) {
        return Effect.as(JsonRpc.isNotification(message) ? notification(message, context) : Effect.void, undefined)
      }
      const request = message
      const era: Revision.Era = Meta.hasVersionClaim(request.params) ? "modern" : "legacy"
      // Suspended: a check that throws is a defect told as -32603, not an exception out of handle.
      const run = Effect.suspend(() => (era === "modern" ? modern(request, context) : legacy(request, context)))
      // One match for the three outcomes (a result, an error response, a defect told as -32603);
      // interruption passes through. A span only while tracing: one per call costs more than the routing.
      const response = Effect.matchCauseEffect(run, {
        onSuccess: (result): Effect.Effect<JsonRpc.Response> =>
          Effect.succeed(JsonRpc.success(request.id, result)),
        onFailure: (cause): Effect.Effect<JsonRpc.Response> => {
          const failure = Cause.failureOrCause(cause)
          if (Either.isLeft(failure)) {
            const o = errorObject(failure.left, era)
            return Effect.succeed(JsonRpc.failure(request.id, o.code, o.message, o.data))
          }
          const defect = Cause.dieOption(failure.right)
          if (Option.isNone(defect)) {
            return Effect.failCause(failure.right)
          }
          return Effect.as(
            Effect.logError("request failed unexpectedly", defect.value),
            JsonRpc.failure(request.id, ErrorCode.InternalError, "Internal error")
          )
        }
      })
      return tracing ? ServerSpans.traced(request, era, context, response) : response
    }

    return Server.of({ options, handle, followTasks: taskFeed.follow })
  })
