/**
 * The client side of the official MCP conformance suite (`conformance client`), played by
 * mcpx-fx's upstream engine: the Prober decides the era of the scenario's mock server and hands
 * back a Session, and every step below is an ordinary `session.request`. Nothing here speaks the
 * wire itself, so what the suite grades is what the gateway would send to a real upstream.
 *
 * The suite starts one mock server per scenario and runs this client with the server's URL; each
 * scenario expects particular calls (taken from the suite's scenario code) and grades the
 * requests it receives.
 */
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import { isJsonObject, type JsonObject } from "@mcpx-fx/protocol/Json"
import * as Revision from "@mcpx-fx/protocol/Revision"
import type { Preference } from "@mcpx-fx/upstream/era/Preference"
import { Prober } from "@mcpx-fx/upstream/era/Prober"
import type { ProbeError } from "@mcpx-fx/upstream/era/ProbeModel"
import { type QuestionHandler, QuestionRefused } from "@mcpx-fx/upstream/session/Questions"
import { HttpDefinition, OAuthSettings } from "@mcpx-fx/upstream/ServerDefinition"
import type { CallContext, Session } from "@mcpx-fx/upstream/session/SessionModel"
import type { SessionError } from "@mcpx-fx/upstream/session/SessionErrors"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { answerQuestions, sampleArguments } from "./Answers.js"

/** One run of the client, as the suite starts it. */
export interface Invocation {
  /** `MCP_CONFORMANCE_SCENARIO` */
  readonly scenario: string
  /** `MCP_CONFORMANCE_PROTOCOL_VERSION`: the revision the run is graded at. */
  readonly protocolVersion: Revision.Revision
  /** `MCP_CONFORMANCE_CONTEXT`, parsed (scenario inputs such as tool calls to make). */
  readonly context: JsonObject
  /** The mock server's URL (the last argument). */
  readonly url: string
}

/** The scenario could not be played: what was missing or unexpected. */
export class ScenarioFailed extends Data.TaggedError("ScenarioFailed")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/** The invocation itself is unusable (no URL, unknown revision, context that is not JSON). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/** Reads the invocation from the environment and argv the suite gives the client. */
export const readInvocation = (
  env: Readonly<Record<string, string | undefined>>,
  argv: ReadonlyArray<string>
): Either.Either<Invocation, UsageError> => {
  const url = argv.at(-1)
  if (url === undefined || !URL.canParse(url)) {
    return Either.left(new UsageError({ reason: `expected the server URL as the last argument, got ${JSON.stringify(url)}` }))
  }
  const scenario = env.MCP_CONFORMANCE_SCENARIO
  if (scenario === undefined || scenario.length === 0) {
    return Either.left(new UsageError({ reason: "MCP_CONFORMANCE_SCENARIO is not set" }))
  }
  // The suite's own default when it sets nothing (it always sets it today).
  const protocolVersion = env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? Revision.LatestLegacyRevision
  if (!Revision.isRevision(protocolVersion)) {
    return Either.left(new UsageError({ reason: `MCP_CONFORMANCE_PROTOCOL_VERSION ${protocolVersion} is not a revision mcpx-fx knows` }))
  }
  const rawContext = env.MCP_CONFORMANCE_CONTEXT
  if (rawContext === undefined) return Either.right({ scenario, protocolVersion, context: {}, url })
  return Either.match(Schema.decodeUnknownEither(Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })))(rawContext), {
    onLeft: () => Either.left(new UsageError({ reason: "MCP_CONFORMANCE_CONTEXT is not a JSON object" })),
    onRight: (context) => Either.right({ scenario, protocolVersion, context, url })
  })
}

/**
 * `prefer-discover` for every revision: it is the product's default and every mock the suite
 * starts allows it. The 2025-era mocks refuse or ignore `server/discover` (a 400 without a modern
 * error, or a success that is no DiscoverResult), so the Prober falls back to `initialize` and
 * the run exercises the fallback real legacy servers get; the 2026 mocks answer it.
 */
export const preference: Preference = "prefer-discover"

/** Who the conformance client says it is, and what it can answer: form elicitation and roots, not sampling. */
export const clientInfo = { name: "mcpx-fx-conformance-client", version: "0.1.0" } as const
export const clientCapabilities: JsonObject = { elicitation: {}, roots: {} }

type Step = (session: Session, invocation: Invocation) => Effect.Effect<void, SessionError | ScenarioFailed>

/** Every call answers questions and, on a modern upstream, resolves `input_required` results here. */
const resolving = (questions: QuestionHandler = answerQuestions): CallContext => ({ questions, inputRequired: "resolve" })

interface Listed {
  readonly name: string
  readonly schema: unknown
}

// A list result's items, across pages; a server that keeps handing out cursors is cut off.
const listAll = (session: Session, method: string, key: string) =>
  Effect.gen(function*() {
    const items: Array<JsonObject> = []
    let cursor: string | undefined
    for (let page = 0; page < 20; page++) {
      const result = yield* session.request(method, cursor === undefined ? {} : { cursor }, resolving())
      const found = result[key]
      if (Array.isArray(found)) items.push(...found.filter(isJsonObject))
      cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined
      if (cursor === undefined) break
    }
    yield* Effect.logInfo(`${method}: ${items.length} item(s)`)
    return items
  })

const listTools = (session: Session) =>
  Effect.map(
    listAll(session, "tools/list", "tools"),
    (tools) => tools.flatMap((t): ReadonlyArray<Listed> => (typeof t.name === "string" ? [{ name: t.name, schema: t.inputSchema }] : []))
  )

const callTool = (session: Session, name: string, args: JsonObject, ctx: CallContext = resolving()) =>
  Effect.gen(function*() {
    const result = yield* session.request("tools/call", { name, arguments: args }, ctx)
    if (result.isError === true) yield* Effect.logWarning(`tools/call ${name} reported an error: ${JSON.stringify(result.content)}`)
    else yield* Effect.logInfo(`tools/call ${name}: ${result.resultType === undefined ? "done" : String(result.resultType)}`)
    return result
  })

const callEveryTool = (session: Session) =>
  Effect.flatMap(listTools(session), (tools) => Effect.forEach(tools, (t) => callTool(session, t.name, sampleArguments(t.schema)), { discard: true }))

const requireTool = (tools: ReadonlyArray<Listed>, name: string) =>
  tools.some((t) => t.name === name)
    ? Effect.void
    : Effect.fail(new ScenarioFailed({ reason: `the server did not list the tool ${name}` }))

// The suite's mock answers a tools/call for add_numbers with the sum in text.
const toolsCall: Step = (session) =>
  Effect.gen(function*() {
    yield* requireTool(yield* listTools(session), "add_numbers")
    yield* callTool(session, "add_numbers", { a: 5, b: 3 })
  })

const callNamed = (name: string): Step => (session) =>
  Effect.gen(function*() {
    yield* requireTool(yield* listTools(session), name)
    yield* callTool(session, name, {})
  })

// Mcp-Method on every method, Mcp-Name on tools/call, resources/read and prompts/get.
const standardHeaders: Step = (session) =>
  Effect.gen(function*() {
    yield* callEveryTool(session)
    const resources = yield* listAll(session, "resources/list", "resources")
    for (const r of resources) {
      if (typeof r.uri === "string") yield* session.request("resources/read", { uri: r.uri }, resolving())
    }
    const prompts = yield* listAll(session, "prompts/list", "prompts")
    for (const p of prompts) {
      if (typeof p.name !== "string") continue
      const required = Array.isArray(p.arguments)
        ? p.arguments.filter(isJsonObject).filter((a) => a.required === true && typeof a.name === "string")
        : []
      const args = Object.fromEntries(required.map((a) => [String(a.name), "sample"]))
      yield* session.request("prompts/get", { name: p.name, arguments: args }, resolving())
    }
  })

const ToolCalls = Schema.Struct({
  toolCalls: Schema.Array(Schema.Struct({ name: Schema.String, arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }))
})

// The context names the calls to make; the engine mirrors the x-mcp-header arguments.
const customHeaders: Step = (session, invocation) =>
  Effect.gen(function*() {
    const { toolCalls } = yield* Schema.decodeUnknown(ToolCalls)(invocation.context).pipe(
      Effect.mapError(() => new ScenarioFailed({ reason: "MCP_CONFORMANCE_CONTEXT carries no toolCalls" }))
    )
    const tools = yield* listTools(session)
    for (const call of toolCalls) {
      yield* requireTool(tools, call.name)
      yield* callTool(session, call.name, call.arguments)
    }
  })

// The engine leaves tools with invalid x-mcp-header annotations out of the listing; every tool
// that is left is called, and the suite checks that none of the invalid ones was.
const invalidToolHeaders: Step = (session) => callEveryTool(session)

// The suite gives back whatever the echo tool receives, to see which schema keywords survived.
const schemaPreservation: Step = (session) =>
  Effect.gen(function*() {
    const tools = yield* listTools(session)
    const echo = "json_schema_echo"
    yield* requireTool(tools, echo)
    const focal = tools.find((t) => t.name !== echo)
    if (focal === undefined || !isJsonObject(focal.schema)) {
      return yield* new ScenarioFailed({ reason: "the server listed no tool whose schema could be echoed" })
    }
    yield* callTool(session, echo, { schema: focal.schema })
  })

// The first call's question is answered only after an unrelated call has gone out, so that call
// travels while the first one is between rounds and must carry none of its inputResponses or
// requestState.
const requestState: Step = (session) =>
  Effect.gen(function*() {
    const tools = yield* listTools(session)
    for (const name of ["test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"]) {
      yield* requireTool(tools, name)
    }
    const betweenRounds: QuestionHandler = (q) =>
      callTool(session, "test_mrtr_unrelated", {}, {}).pipe(
        Effect.mapError((e) => new QuestionRefused({ code: ErrorCode.InternalError, message: `the unrelated call failed: ${e.message}` })),
        Effect.zipRight(answerQuestions(q))
      )
    yield* callTool(session, "test_mrtr_echo_state", {}, resolving(betweenRounds))
    yield* callTool(session, "test_mrtr_no_state", {})
    yield* callTool(session, "test_mrtr_no_result_type", {})
  })

const listOnly: Step = (session) => Effect.asVoid(listTools(session))

/** What each scenario asks of the client, beyond connecting (which the Prober does). */
const steps: Readonly<Record<string, Step>> = {
  initialize: listOnly,
  tools_call: toolsCall,
  "elicitation-sep1034-client-defaults": callNamed("test_client_elicitation_defaults"),
  "sse-retry": callNamed("test_reconnection"),
  "request-metadata": callEveryTool,
  "sep-2322-client-request-state": requestState,
  "http-standard-headers": standardHeaders,
  "http-custom-headers": customHeaders,
  "http-invalid-tool-headers": invalidToolHeaders,
  "json-schema-ref-no-deref": listOnly,
  "json-schema-2020-12-preservation": schemaPreservation
}

const PreRegistered = Schema.Struct({ client_id: Schema.String, client_secret: Schema.optional(Schema.String) })

/** The OAuth settings a scenario's context implies: the pre-registered client it hands out, if any. */
export const oauthSettings = (context: JsonObject): OAuthSettings =>
  Either.match(Schema.decodeUnknownEither(PreRegistered)(context), {
    onLeft: () => new OAuthSettings({ type: "oauth" }),
    onRight: (c) => new OAuthSettings({ type: "oauth", clientId: c.client_id, ...(c.client_secret === undefined ? {} : { clientSecret: c.client_secret }) })
  })

/**
 * Plays one scenario: starts the upstream through the Prober, checks it speaks the revision the
 * run is graded at, and performs the scenario's steps. Scenarios without steps of their own (the
 * authorization ones among them) list and call tools, which is all a client does unprompted.
 */
export const play = (
  invocation: Invocation
): Effect.Effect<void, ProbeError | SessionError | ScenarioFailed, Prober | Scope.Scope> =>
  Effect.gen(function*() {
    const prober = yield* Prober
    yield* Effect.logInfo(`${invocation.scenario} at ${invocation.protocolVersion}: ${invocation.url} (${preference})`)
    const { report, session } = yield* prober.start(
      new HttpDefinition({ transport: "http", name: "conformance", url: invocation.url, auth: oauthSettings(invocation.context) }),
      { preference, probeTimeout: "5 seconds", session: { clientInfo, clientCapabilities } }
    )
    for (const step of report.steps) yield* Effect.logInfo(`probe ${step}`)
    if (session.negotiated !== invocation.protocolVersion) {
      return yield* new ScenarioFailed({
        reason: `the run is graded at ${invocation.protocolVersion} but the upstream was spoken to at ${session.negotiated}`
      })
    }
    const step = steps[invocation.scenario] ?? callEveryTool
    yield* step(session, invocation)
  })
