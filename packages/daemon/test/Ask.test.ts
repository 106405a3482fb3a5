/**
 * `/v1/ask` and `/v1/elicit` over the API's web handler, in front of the era fixture's legacy
 * `ask_name` (a real stdio process that elicits with a server→client request).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, dependencies, webHandler } from "./support/ApiHarness.js"
import * as TestGateway from "@mcpx-fx/testing/gateway/TestGateway"

const servers = { leg: TestGateway.era("legacy-32601") }
type Body = Record<string, unknown>
const questionsOf = (body: Body) => body.questions as ReadonlyArray<Body>
const textOf = (body: Body) => JSON.stringify((body.result as Body | undefined)?.content)

describe("/v1/ask", () => {
  it.scopedLive("v1/ask/a tool that asks comes back input_required; its answers finish it", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const asked = yield* call(web.handler, "POST", "/v1/ask", { tool: "leg.ask_name" })
      assert.strictEqual(asked.status, 200, JSON.stringify(asked.body))
      assert.strictEqual(asked.body.status, "input_required")
      assert.strictEqual(asked.body.tool, "leg__ask_name")
      const [question] = questionsOf(asked.body)
      assert.strictEqual(question?.method, "elicitation/create")
      assert.strictEqual(question?.id, `${String(asked.body.id)}.${String(question?.key)}`)

      const open = yield* call(web.handler, "GET", `/v1/elicit?call=${String(asked.body.id)}`)
      assert.deepInclude(questionsOf(open.body).map((q) => [q.id, q.from, q.call]), [question?.id, "leg__ask_name", asked.body.id])

      const bad = yield* call(web.handler, "POST", `/v1/ask/${String(asked.body.id)}/answers`, {
        answers: { [String(question?.key)]: { action: "accept", content: {} } }
      })
      assert.strictEqual(bad.status, 400, JSON.stringify(bad.body))
      assert.strictEqual(bad.body._tag, "AskInvalid")

      const done = yield* call(web.handler, "POST", `/v1/ask/${String(asked.body.id)}/answers`, {
        answers: { [String(question?.key)]: { action: "accept", content: { name: "Ada" } } }
      })
      assert.strictEqual(done.status, 200, JSON.stringify(done.body))
      assert.strictEqual(done.body.status, "complete")
      assert.include(textOf(done.body), "hello, Ada")
      const gone = yield* call(web.handler, "GET", `/v1/ask/${String(asked.body.id)}?waitMs=0`)
      assert.strictEqual(gone.status, 404, JSON.stringify(gone.body))
    }).pipe(Effect.provide(dependencies(servers))))

  it.scopedLive("v1/elicit/a question answered by id lets its call go on; the next poll has the result", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const asked = yield* call(web.handler, "POST", "/v1/ask", { tool: "leg__ask_name" })
      const [question] = questionsOf(asked.body)
      const declined = yield* call(web.handler, "POST", `/v1/elicit/${String(question?.id)}`, { action: "decline" })
      assert.strictEqual(declined.status, 200, JSON.stringify(declined.body))
      assert.deepStrictEqual(declined.body, { id: question?.id, answered: true, call: asked.body.id })
      const polled = yield* call(web.handler, "GET", `/v1/ask/${String(asked.body.id)}?waitMs=20000`)
      assert.strictEqual(polled.body.status, "complete", JSON.stringify(polled.body))
      assert.include(textOf(polled.body), "no name (decline)")
      const again = yield* call(web.handler, "POST", `/v1/elicit/${String(question?.id)}`, { action: "decline" })
      assert.strictEqual(again.status, 404)
    }).pipe(Effect.provide(dependencies(servers))))

  it.scopedLive("v1/ask/an abandoned call is gone; a call that does not ask completes at once; unknown tools are 404", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const asked = yield* call(web.handler, "POST", "/v1/ask", { tool: "leg.ask_name" })
      const abandoned = yield* call(web.handler, "POST", `/v1/ask/${String(asked.body.id)}/abandon`)
      assert.deepStrictEqual(abandoned.body, { id: asked.body.id, abandoned: true })
      assert.strictEqual((yield* call(web.handler, "GET", `/v1/ask/${String(asked.body.id)}`)).status, 404)
      assert.deepStrictEqual(questionsOf((yield* call(web.handler, "GET", `/v1/elicit?call=${String(asked.body.id)}`)).body), [])

      const echoed = yield* call(web.handler, "POST", "/v1/ask", { tool: "leg.echo", arguments: { message: "hi" } })
      assert.strictEqual(echoed.body.status, "complete")
      assert.include(textOf(echoed.body), "hi")

      const unknown = yield* call(web.handler, "POST", "/v1/ask", { tool: "leg.ask_nmae" })
      assert.strictEqual(unknown.status, 404, JSON.stringify(unknown.body))
      assert.include(unknown.body.suggestions as ReadonlyArray<string>, "leg__ask_name")
    }).pipe(Effect.provide(dependencies(servers))))

  it.scopedLive("v1/ask/a caller that declares no elicitation is told which capability the tool's question needs", () =>
    Effect.gen(function*() {
      const web = yield* webHandler
      const asked = yield* call(web.handler, "POST", "/v1/ask", { tool: "leg.ask_name", capabilities: {} })
      assert.strictEqual(asked.status, 400, JSON.stringify(asked.body))
      assert.deepInclude(asked.body, { _tag: "AskInvalid", reason: "capabilities", requiredCapabilities: { elicitation: {} } })
    }).pipe(Effect.provide(dependencies(servers))))
})
