/**
 * The host-facing Server's Backend, served by the in-process Gateway: what a host asks for over
 * `mcpx-fx serve` is routed to the configured upstreams, and the gateway's failures are retold in
 * the Backend's typed errors so the Server alone decides the JSON-RPC codes.
 */
import * as Method from "@mcpx-fx/protocol/Method"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Metrics from "@mcpx-fx/protocol/Metrics"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Revision from "@mcpx-fx/protocol/Revision"
import type { TaskSupport } from "@mcpx-fx/protocol/Tasks"
import * as TasksExtension from "@mcpx-fx/protocol/TasksExtension"
import * as Backend from "@mcpx-fx/server/Backend"
import * as Questions from "@mcpx-fx/upstream/session/Questions"
import type { Parked } from "@mcpx-fx/upstream/session/SessionModel"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Types from "effect/Types"
import * as CallObserver from "./CallObserver.js"
import * as CallResolution from "./CallResolution.js"
import { Gateway } from "./Gateway.js"
import type { Caller as GatewayCaller, CutShort, GatewayCallError } from "./GatewayModel.js"
import { unaskable } from "./internal/Unaskable.js"
import * as Names from "./Names.js"
import * as PendingCalls from "./PendingCalls.js"
import * as PendingQuestions from "./PendingQuestions.js"
import * as QuestionFit from "./QuestionFit.js"
import * as Redact from "./Redact.js"
import { Settings } from "@mcpx-fx/config/Settings"
import * as ToolSearch from "./ToolSearch.js"

/**
 * The server's caller as the gateway needs it: identity for pooling (its revision also picks the
 * `follow` lane, so each host era meets an upstream session of its own era), capabilities and
 * questions for the upstream. A modern upstream's `input_required` goes back to a modern host as
 * it is, for the host to answer and retry; for a legacy host it is resolved here by asking the
 * host's questions channel, the only way a legacy host can be asked.
 */
export const toGatewayCaller = (
  caller: Backend.Caller,
  /** How a routed call asks (PendingCalls, Unaskable); the caller's own channel when not given. */
  questions?: Questions.QuestionHandler,
  cutShort?: CutShort,
  parked?: Parked,
  observation?: CallObserver.Observation
): GatewayCaller => {
  // One object with its fields set in turn: spreading a base into each variant made four per call.
  const gc: Types.Mutable<GatewayCaller> = {
    revision: caller.revision,
    clientCapabilities: withoutTasks(caller.clientCapabilities),
    inputRequired: caller.era === "modern" ? "return" : "resolve"
  }
  if (caller.sessionId !== undefined) gc.sessionId = gc.callerId = caller.sessionId
  if (caller.onTask !== undefined) gc.onTask = caller.onTask
  if (caller.notify !== undefined) gc.onNotification = caller.notify
  if (caller.logLevel !== undefined) gc.logLevel = caller.logLevel
  const asks = questions ?? (caller.questions === undefined ? undefined : channelQuestions(caller, caller.questions))
  if (asks !== undefined) gc.questions = asks
  if (cutShort !== undefined) gc.cutShort = cutShort
  if (parked !== undefined) gc.parked = parked
  if (observation !== undefined) gc.observation = observation
  return gc
}

/** A host's questions channel as the upstream's questions are put to it. */
const channelQuestions = (caller: Backend.Caller, channel: Backend.QuestionChannel): Questions.QuestionHandler =>
  // The two packages declare their own refusal so neither depends on the other; only the class differs.
  Questions.withPing((q) => {
    const fit = fitQuestion(caller, q)
    if (fit._tag === "Answer") return Effect.succeed(fit.result)
    if (fit._tag === "Refuse") return Effect.fail(new Questions.QuestionRefused({ code: fit.code, message: fit.message }))
    return Effect.mapError(channel(fit.question), (e) => new Questions.QuestionRefused({ code: e.code, message: e.message }))
  })

/**
 * A host's tasks are mcpx-fx's to run (HostTasks), never an upstream's to start: the extension a
 * host declared is not passed on, so an upstream answers the call itself.
 */
const withoutTasks = (caps: JsonObject): JsonObject => {
  if (!isJsonObject(caps.extensions) || !(TasksExtension.ExtensionId in caps.extensions)) return caps
  const { [TasksExtension.ExtensionId]: _tasks, ...extensions } = caps.extensions
  return { ...caps, extensions }
}

/** The task support a tool's definition declares; anything else is "forbidden". */
const supportOf = (tool: JsonObject | undefined): TaskSupport => {
  const execution = tool?.execution
  const support = isJsonObject(execution) ? execution.taskSupport : undefined
  return support === "optional" || support === "required" ? support : "forbidden"
}

/** What to do with an upstream's question for this host. */
type Fit =
  | { readonly _tag: "Ask"; readonly question: Backend.Question }
  | { readonly _tag: "Answer"; readonly result: JsonObject }
  | { readonly _tag: "Refuse"; readonly code: number; readonly message: string }

const declared = (caller: Backend.Caller, capability: string): boolean => isJsonObject(caller.clientCapabilities[capability])

/**
 * A host is only asked what it said it can answer, in its revision's words. An elicitation it
 * cannot take is answered `cancel` on its behalf (the upstream carries on as if the person
 * dismissed it); sampling it never declared is refused as a client without it would, and roots,
 * which are the client's rather than the call's, are answered with none.
 */
export const fitQuestion = (caller: Backend.Caller, question: Backend.Question): Fit => {
  const revision = caller.revision
  switch (question.method) {
    case Method.ElicitationCreate: {
      const cancel: Fit = { _tag: "Answer", result: { action: "cancel" } }
      if (!declared(caller, "elicitation") || !Revision.atLeast(revision, "2025-06-18")) return cancel
      if (Revision.atLeast(revision, "2025-11-25")) return { _tag: "Ask", question }
      // `mode` arrived in 2025-11-25; an older host knows only the form, and no URL elicitation.
      const { mode, ...rest } = question.params
      return mode === undefined || mode === "form" ? { _tag: "Ask", question: { method: question.method, params: rest } } : cancel
    }
    case Method.SamplingCreateMessage:
      return declared(caller, "sampling")
        ? { _tag: "Ask", question }
        : { _tag: "Refuse", code: ErrorCode.MethodNotFound, message: "the host did not declare sampling" }
    case Method.RootsList:
      return declared(caller, "roots")
        ? { _tag: "Ask", question }
        : { _tag: "Answer", result: Questions.noRoots }
    default:
      return { _tag: "Ask", question }
  }
}

/**
 * The MRTR fields a modern retry sends upstream: the host's answers and the upstream's own state
 * (the Server has already checked mcpx-fx's state and unwrapped it).
 */
export const retryParams = (retry: Backend.InputRetry | undefined): JsonObject => ({
  ...(retry?.inputResponses === undefined ? {} : { inputResponses: retry.inputResponses }),
  ...(retry?.requestState === undefined ? {} : { requestState: retry.requestState })
})

/**
 * The result a modern host is given for a move of its pending call: the upstream's result, or the
 * questions of this round under a handle that mcpx-fx's own signed `requestState` will carry.
 */
export const moveResult = (move: Exclude<PendingQuestions.Move, { readonly _tag: "Running" }>): JsonObject =>
  move._tag === "Complete" ? move.result : {
    resultType: "input_required",
    inputRequests: Object.fromEntries(move.questions.map((q) => [q.key, { method: q.method, params: q.params }])),
    requestState: move.handle
  }

/** Retells a pending call's own failures as Backend errors. */
export const toBackendPendingError = (e: PendingQuestions.PendingError, redact: Redact.Redactor = Redact.make([])): Backend.BackendError => {
  switch (e._tag) {
    case "PendingCallRefused":
      return new Backend.InputRefused({ reason: e.reason, detail: e.detail, clientError: e.reason !== "rounds" && e.reason !== "full" && e.reason !== "ended" })
    default:
      return toBackendError(e, redact)
  }
}

/**
 * Retells a gateway failure as the Backend error the Server knows how to answer, with `redact`
 * over the text an upstream could have put a secret in (its message, error data, stderr tail).
 */
export const toBackendError = (e: GatewayCallError, redact: Redact.Redactor = Redact.make([])): Backend.BackendError => {
  switch (e._tag) {
    case "UnknownName":
      return new Backend.UnknownName({ kind: e.kind, name: e.name, suggestions: e.suggestions })
    case "CapabilitiesLacking":
      return new Backend.CapabilityRequired({ requiredCapabilities: e.requiredCapabilities })
    case "CallTimedOut":
      return new Backend.CallTimedOut({ server: e.server, method: e.method, timeoutMs: e.timeoutMs })
    case "UpstreamRpcError":
      return new Backend.UpstreamError({
        server: e.server,
        method: e.method,
        code: e.code,
        rpcMessage: redact.text(e.rpcMessage),
        ...(e.data === undefined ? {} : { data: redact.json(e.data) })
      })
    case "PoolError":
      if (e.reason === "shutdown") return new Backend.ShuttingDown()
      return new Backend.BackendUnavailable({ server: e.server, reason: redact.text(e.message) })
    default:
      return new Backend.BackendUnavailable({ reason: redact.text(e.message) })
  }
}

/** A meta-tool's arguments that do not fit its schema: -32602, as for any tool. */
const metaRefusal = (tool: string, detail: string) =>
  new Backend.UpstreamError({ server: "mcpx-fx", method: Method.ToolsCall, code: ErrorCode.InvalidParams, rpcMessage: `${tool}: ${detail}` })

/** The Backend over the Gateway; `tools.expose` decides whether hosts see the tools or the meta-tools. */
export const layer: Layer.Layer<Backend.Backend, never, Gateway | PendingCalls.PendingCalls | Settings> = Layer.effect(
  Backend.Backend,
  Effect.map(Effect.all([Gateway, PendingCalls.PendingCalls, Settings, CallObserver.CallSinks]), ([gateway, pending, settings, sinks]) => {
    // Built when something failed, from the servers configured then: failures are rare, and the
    // configuration may have changed since the last one.
    const redactor = () => Redact.forDefinitions(gateway.servers.map((s) => s.configured.definition))
    const call = <A>(effect: Effect.Effect<A, GatewayCallError>) => Effect.mapError(effect, (e) => toBackendError(e, redactor()))
    const listed = <L extends { readonly failures: ReadonlyArray<Backend.ListingFailure> }>(effect: Effect.Effect<L>) =>
      Effect.map(effect, (l): L => {
        if (l.failures.length === 0) return l
        const r = redactor()
        return { ...l, failures: l.failures.map((f) => ({ ...f, message: r.text(f.message) })) }
      })
    const withMeta = (p: JsonObject, meta: JsonObject | undefined): JsonObject => (meta === undefined ? p : { ...p, _meta: meta })
    const gather = settings.get("questions.gather")

    /**
     * A call, or — for a modern retry — its repetition, with the retry fields added to the first
     * round's params. Both take the one path that resolves the name and applies the server's tool
     * filters, so a retry can reach nothing a first call could not.
     *
     * A modern host cannot be asked on a channel, so its call runs in PendingCalls: a legacy
     * upstream's question ends the host's request with `input_required`, the upstream call waits,
     * and the retry that brings mcpx-fx's handle answers it. A modern upstream's own
     * `input_required` passes through as a result. A modern host that declared nothing it can be
     * asked has its call run in its own request (internal/Unaskable.ts), told the same.
     */
    const routed = (
      caller: Backend.Caller,
      label: string,
      send: (gc: GatewayCaller, retry: JsonObject | undefined) => Effect.Effect<JsonObject, GatewayCallError>,
      /** The tool call's observation, handed on to the Gateway; its end is the run's (internal/Unaskable.ts). */
      observation?: CallObserver.Observation
    ): Effect.Effect<JsonObject, Backend.BackendError> => {
      const retry = caller.retry === undefined ? undefined : retryParams(caller.retry)
      const run = (questions?: Questions.QuestionHandler, cutShort?: CutShort, parked?: Parked) =>
        send(toGatewayCaller(caller, questions, cutShort, parked, observation), retry)
      if (caller.era !== "modern") return call(run())
      const handle = caller.retry?.requestState
      if (!PendingQuestions.isHandle(handle) && QuestionFit.asksNothing(caller.clientCapabilities)) {
        return Effect.mapError(unaskable(QuestionFit.asker(caller.clientCapabilities), gather, run, observation), (e) => toBackendPendingError(e, redactor()))
      }
      const move = PendingQuestions.isHandle(handle)
        ? pending.resume({ handle }, caller.retry?.inputResponses ?? {})
        : pending.begin(label, QuestionFit.asker(caller.clientCapabilities), (questions, parked) => run(questions, undefined, parked))
      // A host's request waits for a move (no `wait`), so a call is never left running under it.
      return move.pipe(
        Effect.mapError((e) => toBackendPendingError(e, redactor())),
        Effect.flatMap((m) => m._tag === "Running" ? Effect.dieMessage("a pending call ran on without a move") : Effect.succeed(moveResult(m)))
      )
    }

    // `completion/complete` names its target by `ref`; the upstream must see its own name for it.
    const complete = (caller: Backend.Caller, params: JsonObject, meta?: JsonObject) => {
      const ref = params.ref
      const target = isJsonObject(ref) ? ref : {}
      const to = (namespace: string, upstreamRef: JsonObject) =>
        call(gateway.forward(toGatewayCaller(caller), namespace, Method.CompletionComplete, withMeta({ ...params, ref: upstreamRef }, meta)))
      if (target.type === "ref/resource" && typeof target.uri === "string") {
        const found = Names.resolveUri(gateway.servers, target.uri)
        return found === undefined
          ? Effect.fail(new Backend.UnknownName({ kind: "resource", name: target.uri, suggestions: [] }))
          : to(found.server.namespace, { ...target, uri: found.uri })
      }
      const name = typeof target.name === "string" ? target.name : ""
      const found = Names.resolve(gateway.servers, name)
      return found === undefined
        ? Effect.fail(new Backend.UnknownName({ kind: "prompt", name, suggestions: [] }))
        : to(found.server.namespace, { ...target, name: found.name })
    }

    /**
     * A tool call by the resolution its request's header check made (`Caller.resolved`: the same
     * caller, the same name, this round's), else by its name, resolved by the Gateway. Either way
     * it goes through CallResolution, filters included, once.
     */
    const toolCall = (caller: Backend.Caller, name: string, args: JsonObject, meta: JsonObject | undefined, observation?: CallObserver.Observation) => {
      const tool = CallResolution.carried(caller.resolved, name) ?? name
      return routed(caller, name, (gc, retry) => gateway.callTool(gc, tool, args, meta, retry), observation)
    }

    // The meta-tools exist while some server's tools are behind them.
    const behindSearch = Effect.map(settings.get("tools.expose"), (mode) => {
      const behind = ToolSearch.searched(mode)
      return gateway.servers.some(behind) ? behind : undefined
    })

    const metaCall = (caller: Backend.Caller, name: string, args: JsonObject, meta: JsonObject | undefined, observation: CallObserver.Observation) =>
      Effect.flatMap(behindSearch, (behind): Effect.Effect<JsonObject, Backend.BackendError> => {
        if (behind === undefined) return toolCall(caller, name, args, meta, observation)
        if (name === ToolSearch.SearchName) {
          const request = ToolSearch.read.search(args)
          return typeof request === "string"
            ? Effect.fail(metaRefusal(name, request))
            : Effect.map(ToolSearch.search(gateway, toGatewayCaller(caller), request), ToolSearch.searchResult)
        }
        if (name === ToolSearch.DescribeName) {
          const tool = ToolSearch.read.name(args)
          return typeof tool !== "string"
            ? Effect.fail(metaRefusal(name, tool.error))
            : Effect.map(call(gateway.describeTool(toGatewayCaller(caller), tool)), ToolSearch.describeResult)
        }
        const request = ToolSearch.read.call(args)
        // A retry of an input_required call comes back through mcpx_call too, and is routed as the first round was.
        return typeof request === "string"
          ? Effect.fail(metaRefusal(name, request))
          : toolCall(caller, request.name, request.arguments, meta, observation)
      })

    // Every host request the gateway answers is timed here, whichever host transport it came by.
    const timed = Metrics.recordServer
    return Backend.Backend.of({
      listTools: (caller) =>
        timed(
          Method.ToolsList,
          listed(Effect.flatMap(behindSearch, (behind) =>
            behind === undefined
              ? gateway.listTools(toGatewayCaller(caller))
              : Effect.map(gateway.listTools(toGatewayCaller(caller), (s) => !behind(s)), (listing) => ({
                items: [...listing.items, ...ToolSearch.definitions],
                failures: listing.failures
              }))))
        ),
      listPrompts: (caller) => timed(Method.PromptsList, listed(gateway.listPrompts(toGatewayCaller(caller)))),
      listResources: (caller) => timed(Method.ResourcesList, listed(gateway.listResources(toGatewayCaller(caller)))),
      listResourceTemplates: (caller) => timed(Method.ResourcesTemplatesList, listed(gateway.listResourceTemplates(toGatewayCaller(caller)))),
      // A tool call is timed once, by its observation, for the metrics, the log line and the live page.
      callTool: (caller, name, args, meta) => {
        const observation = new CallObserver.Observation("backend", name, caller.sessionId, caller.revision, caller.clientInfo)
        return CallObserver.observe(
          sinks,
          observation,
          true,
          name === ToolSearch.SearchName || name === ToolSearch.DescribeName || name === ToolSearch.CallName
            ? metaCall(caller, name, args, meta, observation)
            : toolCall(caller, name, args, meta, observation)
        )
      },
      getPrompt: (caller, name, args, meta) => timed(Method.PromptsGet, routed(caller, name, (gc, retry) => gateway.getPrompt(gc, name, args, meta, retry))),
      readResource: (caller, uri, meta) => timed(Method.ResourcesRead, routed(caller, uri, (gc, retry) => gateway.readResource(gc, uri, meta, retry))),
      complete: (caller, params, meta) => timed(Method.CompletionComplete, complete(caller, params, meta)),
      taskSupport: (caller, name) => {
        const peeked = CallResolution.carried(caller.resolved, name) ?? gateway.peekTool(name)
        return peeked !== undefined
          ? Effect.succeed(supportOf(peeked.tool))
          : Effect.map(
            Effect.option(gateway.resolveTool(toGatewayCaller(caller), name, { suggest: false })),
            (found) => supportOf(found._tag === "Some" ? found.value.tool : undefined)
          )
      },
      // A task cancelled while its call waits on questions: the pending call ends, its upstream
      // request (or the upstream's own task) cancelled. An upstream's own state holds nothing here.
      abandon: (_caller, requestState) => {
        const handle = PendingQuestions.parseHandle(requestState)
        return handle === undefined ? Effect.void : Effect.asVoid(pending.abandon(handle.id))
      },
      // Gateway changes already have the Backend's shape (plus the server they came from).
      changes: gateway.changes,
      watchResource: (caller, uri) => Effect.mapError(gateway.watchResource(toGatewayCaller(caller), uri), (e) => toBackendError(e, redactor()))
    })
  })
)
