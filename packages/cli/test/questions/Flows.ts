/**
 * What a 2026-07-28 host does with a legacy upstream's questions, written once and run over every
 * way a host reaches mcpx-fx (support/ModernHost.ts). The upstream is the official SDK 1.x fixture
 * (sdk-v1-legacy, its asking tools in packages/testing/src/sdk/LegacyQuestions.ts), whose results
 * say what it was answered, and whose `--log` shows what reached it.
 *
 * The host never sees a server→client request: each question comes as an `inputRequests` entry
 * of an `input_required` result under a key mcpx-fx minted, with mcpx-fx's signed `requestState`,
 * and the host's retry (same method and params, plus `inputResponses` and the state) answers it.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as EraLog from "../support/EraLog.js"
import type { ModernHost } from "../support/ModernHost.js"
import { error, firstText, result } from "../support/Replies.js"
import type { Message } from "../support/StdioServe.js"

/** One sdk-v1-legacy upstream: its namespace and its `--log` file. */
export interface Upstream {
  readonly ns: string
  readonly log: string
}

/** The daemon's (or serve's) definition of an sdk-v1-legacy upstream logging to `log`. */
export const legacyServer = (script: string, log: string, extra: Readonly<Record<string, unknown>> = {}) => ({
  command: process.execPath,
  args: [script, "--log", log],
  ...extra
})

export const Everything = { elicitation: {}, sampling: {}, roots: {} }
export const Elicitation = { elicitation: {} }

/** What the host's model says when it is sampled. */
export const modelReply = { role: "assistant", content: { type: "text", text: "Hi there" }, model: "test-model", stopReason: "endTurn" }

export const accept = (content: Message) => ({ action: "accept", content })

/** An `input_required` result's questions (by key) and state. */
export interface Asked {
  readonly requests: Readonly<Record<string, Message>>
  readonly keys: ReadonlyArray<string>
  readonly state: string
}

/** The questions of an `input_required` reply; fails the test on anything else. */
export const inputRequired = (reply: Message): Asked => {
  const r = result(reply)
  assert.strictEqual(r.resultType, "input_required", JSON.stringify(reply))
  assert.isObject(r.inputRequests, JSON.stringify(reply))
  assert.isString(r.requestState, JSON.stringify(reply))
  const requests = r.inputRequests as Readonly<Record<string, Message>>
  return { requests, keys: Object.keys(requests), state: r.requestState as string }
}

/** The one question of a round, checked to be of `method`. */
export const onlyQuestion = (asked: Asked, method: string): { readonly key: string; readonly params: Message } => {
  assert.strictEqual(asked.keys.length, 1, JSON.stringify(asked.requests))
  const key = asked.keys[0]!
  const request = asked.requests[key]!
  assert.strictEqual(request.method, method, JSON.stringify(request))
  assert.match(key, /^[a-z]+_\d+$/, "keys are minted by mcpx-fx")
  return { key, params: request.params as Message }
}

/** A complete reply (fails the test on anything else). */
export const complete = (reply: Message): Message => {
  assert.strictEqual(result(reply).resultType, "complete", JSON.stringify(reply))
  return reply
}

/** A JSON-RPC error of `code`, its message and `data.reason`. */
export const refused = (reply: Message, code: number) => {
  const e = error(reply)
  assert.strictEqual(e.code, code, JSON.stringify(reply))
  return { message: e.message, data: (e.data ?? {}) as Message }
}

let ids = 0
/** A fresh request id (ids only need to be unique per connection; these are unique per process). */
export const nextId = (what: string) => `${what}-${++ids}`

/** A request and its retries: the same method and params each time, the retry fields added. */
export const asking = (host: ModernHost, method: string, params: Message, capabilities: Message) => ({
  first: host.request(nextId("first"), method, params, capabilities),
  retry: (inputResponses: Message, requestState: string) => host.request(nextId("retry"), method, { ...params, inputResponses, requestState }, capabilities)
})

export const tool = (u: Upstream, name: string, args: Message = {}) => ({ name: `${u.ns}__${name}`, arguments: args })

const has = (line: string) => (log: ReadonlyArray<EraLog.Logged>) => log.some((l) => `${l.era} ${l.method}` === line)

/** Waits until the upstream's log has `line` (`legacy notifications/cancelled`, `asked elicitation/create`, …). */
export const upstreamSaw = (u: Upstream, line: string) => EraLog.until(u.log, has(line))

/** How many times `line` is in the upstream's log. */
export const upstreamCount = (u: Upstream, line: string) => EraLog.read(u.log).filter((l) => `${l.era} ${l.method}` === line).length

// ---------------------------------------------------------------------------------------------
// The flows, one per requirement; each leaves nothing in flight on its upstream.

/** An elicitation accepted, declined and cancelled: each answer reaches the upstream as given. */
export const elicitation = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const answers = [
      [accept({ name: "Ada" }), "Hello, Ada!"],
      [{ action: "decline" }, "No name given (decline)"],
      [{ action: "cancel" }, "No name given (cancel)"]
    ] as const
    for (const [answer, expected] of answers) {
      const call = asking(host, "tools/call", tool(u, "ask_name"), Elicitation)
      const asked = inputRequired(yield* call.first)
      const { key, params } = onlyQuestion(asked, "elicitation/create")
      assert.strictEqual(params.message, "What is your name?")
      assert.deepInclude(params.requestedSchema as Message, { type: "object", required: ["name"] })
      // The 2026 embedded request is params only: no legacy elicitationId, nothing of the upstream's.
      assert.notProperty(params, "elicitationId")
      assert.strictEqual(firstText(complete(yield* call.retry({ [key]: answer }, asked.state))), expected)
    }
  })

/** A sampling request reaches the host as the upstream asked it, and the model's reply goes back. */
export const sampling = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const call = asking(host, "tools/call", tool(u, "ask_sampling", { prompt: "Say hi" }), { sampling: {} })
    const asked = inputRequired(yield* call.first)
    const { key, params } = onlyQuestion(asked, "sampling/createMessage")
    assert.deepStrictEqual(params.messages, [{ role: "user", content: { type: "text", text: "Say hi" } }])
    assert.strictEqual(params.maxTokens, 50)
    const reply = yield* call.retry({ [key]: modelReply }, asked.state)
    assert.strictEqual(firstText(complete(reply)), `Asked "Say hi": the model (test-model) said: Hi there`)
  })

/** A roots/list reaches the host, and its roots go back. */
export const roots = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const call = asking(host, "tools/call", tool(u, "ask_roots"), { roots: {} })
    const asked = inputRequired(yield* call.first)
    const { key } = onlyQuestion(asked, "roots/list")
    const reply = yield* call.retry({ [key]: { roots: [{ uri: "file:///work", name: "work" }, { uri: "file:///home" }] } }, asked.state)
    assert.strictEqual(firstText(complete(reply)), "Roots: file:///work, file:///home")
  })

/**
 * Two questions asked at once come in one round; a retry that answers only one gets the other
 * asked again (under its key), and answering it finishes the call.
 */
export const severalAtOnce = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const call = asking(host, "tools/call", tool(u, "ask_two"), Everything)
    const first = inputRequired(yield* call.first)
    assert.strictEqual(first.keys.length, 2, JSON.stringify(first.requests))
    const keyOf = (method: string) => first.keys.find((k) => first.requests[k]?.method === method)!
    const elicit = keyOf("elicitation/create")
    const sample = keyOf("sampling/createMessage")
    assert.isString(elicit)
    assert.isString(sample)
    const second = inputRequired(yield* call.retry({ [elicit]: accept({ name: "Ada" }) }, first.state))
    assert.deepStrictEqual(second.keys, [sample], JSON.stringify(second.requests))
    assert.notStrictEqual(second.state, first.state)
    const reply = yield* call.retry({ [sample]: modelReply }, second.state)
    assert.strictEqual(firstText(complete(reply)), "name: Ada; the model (test-model) said: Hi there")
  })

/** A question asked after the answer to another is a second round, under a new key and state. */
export const multiRound = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const call = asking(host, "tools/call", tool(u, "ask_twice"), Elicitation)
    const one = inputRequired(yield* call.first)
    const first = onlyQuestion(one, "elicitation/create")
    assert.strictEqual(first.params.message, "What is your name?")
    const two = inputRequired(yield* call.retry({ [first.key]: accept({ name: "Ada" }) }, one.state))
    const second = onlyQuestion(two, "elicitation/create")
    assert.strictEqual(second.params.message, "Hello Ada, what is your favourite colour?")
    assert.notStrictEqual(second.key, first.key)
    assert.notStrictEqual(two.state, one.state)
    assert.strictEqual(firstText(complete(yield* call.retry({ [second.key]: accept({ color: "teal" }) }, two.state))), "Ada likes teal")
  })

/** prompts/get and resources/read ask too, and their retries complete them. */
export const promptAndResource = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const prompt = asking(host, "prompts/get", { name: `${u.ns}__ask_prompt`, arguments: { audience: "kids" } }, Elicitation)
    const p = inputRequired(yield* prompt.first)
    const topic = onlyQuestion(p, "elicitation/create")
    assert.strictEqual(topic.params.message, "What should the prompt be about?")
    const got = complete(yield* prompt.retry({ [topic.key]: accept({ topic: "owls" }) }, p.state))
    assert.deepStrictEqual(result(got).messages, [{ role: "user", content: { type: "text", text: "Tell me about owls, for kids" } }])

    const resource = asking(host, "resources/read", { uri: `mcpx://${u.ns}/legacy://asked` }, Elicitation)
    const r = inputRequired(yield* resource.first)
    const word = onlyQuestion(r, "elicitation/create")
    const read = complete(yield* resource.retry({ [word.key]: accept({ word: "hello" }) }, r.state))
    const contents = result(read).contents as ReadonlyArray<Message>
    assert.strictEqual(contents[0]?.text, "You said: hello", JSON.stringify(read))
  })

/** A signature that does not hold, and the state of a round already answered, or of a finished call. */
export const tamperedAndReplayed = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const call = asking(host, "tools/call", tool(u, "ask_twice"), Elicitation)
    const one = inputRequired(yield* call.first)
    const first = onlyQuestion(one, "elicitation/create")
    const answer = { [first.key]: accept({ name: "Ada" }) }

    // The last character of the signature changed: -32602, saying so, and the call lives on.
    const last = one.state.slice(-1)
    const tampered = refused(yield* call.retry(answer, `${one.state.slice(0, -1)}${last === "A" ? "B" : "A"}`), -32602)
    assert.include(tampered.message, "signature")
    assert.strictEqual(tampered.data.reason, "tampered")

    const two = inputRequired(yield* call.retry(answer, one.state))
    const second = onlyQuestion(two, "elicitation/create")
    // Round 1's state again, now that round 2 is waiting.
    const replayed = refused(yield* call.retry(answer, one.state), -32602)
    assert.strictEqual(replayed.data.reason, "used")
    assert.include(replayed.message, "round 1, which was answered already")

    const done = yield* call.retry({ [second.key]: accept({ color: "teal" }) }, two.state)
    assert.strictEqual(firstText(complete(done)), "Ada likes teal")
    // And the last round's state once the call is over.
    const afterwards = refused(yield* call.retry({ [second.key]: accept({ color: "red" }) }, two.state), -32602)
    assert.strictEqual(afterwards.data.reason, "used")
    assert.include(afterwards.message, "completed")
  })

/** Answers that do not fit the question are refused with -32602, and change nothing. */
export const invalidAnswer = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const call = asking(host, "tools/call", tool(u, "ask_name"), Elicitation)
    const asked = inputRequired(yield* call.first)
    const { key } = onlyQuestion(asked, "elicitation/create")
    const cases = [
      [accept({ name: 42 }), "name must be a string"],
      [accept({}), "needs name"],
      [{ action: "maybe" }, key],
      ["yes", key]
    ] as const
    for (const [answer, says] of cases) {
      const no = refused(yield* call.retry({ [key]: answer }, asked.state), -32602)
      assert.strictEqual(no.data.reason, "invalid-answer", JSON.stringify(answer))
      assert.include(no.message, says)
    }
    assert.strictEqual(upstreamCount(u, "answered elicitation/create"), 0, "a refused answer never reaches the upstream")
    assert.strictEqual(firstText(complete(yield* call.retry({ [key]: accept({ name: "Ada" }) }, asked.state))), "Hello, Ada!")
  })

/**
 * A question the host did not declare it can take is -32021 with `requiredCapabilities`, the
 * upstream's question answered on the host's behalf; the upstream is free for the next call.
 * Roots are the exception: they are the client's, not the call's, so a host that declared none is
 * not failed for them; mcpx-fx answers with none.
 */
export const undeclared = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const cases = [
      ["ask_sampling", Elicitation, { sampling: {} }, "answered sampling/createMessage"],
      ["ask_name", {}, { elicitation: {} }, "answered elicitation/create"]
    ] as const
    for (const [name, declared, required, answered] of cases) {
      const before = upstreamCount(u, answered)
      const no = refused(yield* host.request(nextId("undeclared"), "tools/call", tool(u, name), declared), -32021)
      assert.deepStrictEqual(no.data.requiredCapabilities, required)
      yield* EraLog.until(u.log, (log) => log.filter((l) => `${l.era} ${l.method}` === answered).length > before)
    }
    for (const declared of [{ sampling: {} }, {}]) {
      const noRoots = yield* host.request(nextId("undeclared"), "tools/call", tool(u, "ask_roots"), declared)
      assert.strictEqual(firstText(complete(noRoots)), "Roots: (none)", JSON.stringify(declared))
    }
    const ok = asking(host, "tools/call", tool(u, "ask_roots"), { roots: {} })
    const asked = inputRequired(yield* ok.first)
    assert.strictEqual(firstText(complete(yield* ok.retry({ [onlyQuestion(asked, "roots/list").key]: { roots: [] } }, asked.state))), "Roots: (none)")
  })

/**
 * A host that walks away from its retry (the answer delivered, the upstream working on) ends the
 * upstream call: the cancellation reaches it, and the call's state is refused afterwards.
 */
export const abandonAfterAnswer = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const call = asking(host, "tools/call", tool(u, "ask_then_wait"), Elicitation)
    const asked = inputRequired(yield* call.first)
    const { key } = onlyQuestion(asked, "elicitation/create")
    const answer = { [key]: accept({ name: "Ada" }) }
    const retry = yield* host.begin(
      nextId("retry"),
      "tools/call",
      { ...tool(u, "ask_then_wait"), inputResponses: answer, requestState: asked.state },
      Elicitation
    )
    yield* upstreamSaw(u, "answered elicitation/create")
    yield* retry.abandon
    yield* upstreamSaw(u, "legacy notifications/cancelled")
    const gone = refused(yield* call.retry(answer, asked.state), -32602)
    assert.strictEqual(gone.data.reason, "abandoned")
  })

/** At `questions.ttl` an unanswered question is answered cancel, the upstream call cancelled, and the state refused as expired. */
export const expiry = (host: ModernHost, u: Upstream) =>
  Effect.gen(function*() {
    const call = asking(host, "tools/call", tool(u, "ask_name"), Elicitation)
    const asked = inputRequired(yield* call.first)
    const { key } = onlyQuestion(asked, "elicitation/create")
    yield* upstreamSaw(u, "answered elicitation/create")
    yield* upstreamSaw(u, "legacy notifications/cancelled")
    // Refused as expired by whichever check meets it first: the signed state (its lifetime is
    // questions.ttl too) or the call it names.
    const late = refused(yield* call.retry({ [key]: accept({ name: "Ada" }) }, asked.state), -32602)
    assert.strictEqual(late.data.reason, "expired")
    assert.include(late.message, "expired")
  })

/** A flow a host runs against one upstream. */
export type Flow = (host: ModernHost, u: Upstream) => Effect.Effect<void, never, Scope.Scope>

/** The flows every transport runs: requirement (the test's name), what it shows, the flow. */
export const Every: ReadonlyArray<readonly [string, string, Flow]> = [
  ["elicitation", "an elicitation accepted, declined and cancelled reaches the host and each answer the upstream", elicitation],
  ["sampling", "a sampling request reaches the host and the model's reply the upstream", sampling],
  ["roots", "a roots/list reaches the host and its roots the upstream", roots],
  ["several-at-once", "two questions asked at once come in one round; one left unanswered is asked again", severalAtOnce],
  ["multi-round", "a question after an answer is a second round under a new key and state", multiRound],
  ["prompts-and-resources", "prompts/get and resources/read ask too, and their retries complete them", promptAndResource],
  ["request-state", "a tampered state, a round's state replayed and a finished call's state are -32602 saying which", tamperedAndReplayed],
  ["invalid-answer", "answers that do not fit the question are -32602 and change nothing", invalidAnswer],
  ["undeclared-capability", "a question of an undeclared capability is -32021 with requiredCapabilities", undeclared],
  ["abandon", "walking away from a retry whose answer was delivered ends the upstream call", abandonAfterAnswer]
]
