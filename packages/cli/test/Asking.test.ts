import { assert, describe, it } from "@effect/vitest"
import * as QuestionFit from "@mcpx-fx/gateway/QuestionFit"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Either from "effect/Either"
import * as Asking from "../src/Asking.js"

// Every kind of field a form elicitation may ask for (2025-11-25 elicitation: primitive types,
// single-select enums plain, legacy-titled and titled, multi-select arrays plain and titled).
const requestedSchema: JsonObject = {
  type: "object",
  properties: {
    name: { type: "string" },
    code: { type: "string", minLength: 6, maxLength: 8 },
    email: { type: "string", format: "email" },
    site: { type: "string", format: "uri" },
    day: { type: "string", format: "date" },
    at: { type: "string", format: "date-time" },
    ratio: { type: "number", minimum: 0.5, maximum: 2 },
    count: { type: "integer", minimum: 3 },
    below: { type: "integer", maximum: -2 },
    ok: { type: "boolean" },
    colour: { type: "string", enum: ["red", "green"] },
    legacy: { type: "string", enum: ["a", "b"], enumNames: ["A", "B"] },
    size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
    tags: { type: "array", items: { type: "string", enum: ["x", "y", "z"] }, minItems: 2 },
    picks: { type: "array", items: { anyOf: [{ const: "p", title: "P" }, { const: "q", title: "Q" }] } },
    kept: { type: "string", default: "as is" }
  },
  required: ["name", "code", "email", "ratio", "count", "ok", "colour", "size", "tags", "picks"]
}

const params: JsonObject = { mode: "form", message: "Fill in", requestedSchema }

describe("the exit-75 answer template", () => {
  it("is content elicit answer accepts as it is, for every field type a form may ask for", () => {
    const content = JSON.parse(Asking.answerTemplate(params)) as JsonObject
    const fitted = QuestionFit.fit({ method: "elicitation/create", params }, { action: "accept", content })
    assert.isTrue(Either.isRight(fitted), JSON.stringify(fitted))
    assert.deepStrictEqual(content.tags, ["x", "y"])
    assert.deepStrictEqual(content.picks, ["p"])
    assert.strictEqual(content.size, "s")
    assert.strictEqual(content.kept, "as is")
    assert.strictEqual(content.count, 3)
    assert.strictEqual(content.below, -2)
  })

  it("is printed in the answer command of a pending question", () => {
    const status: Asking.Status = {
      id: "c1",
      tool: "alpha__form",
      status: "input_required",
      questions: [{ id: "c1.elicitation_1", key: "elicitation_1", method: "elicitation/create", params }]
    }
    const text = Asking.describePending(status, true)
    assert.include(text, `mcpx-fx elicit answer c1.elicitation_1 '${Asking.answerTemplate(params)}'`)
    assert.include(text, `field: tags (a list of "x", "y", "z", required)`)
    assert.include(text, `field: size (one of "s", "l", required)`)
  })

  it("is {} for a URL elicitation, which elicit answer needs as its content", () => {
    const url: JsonObject = { mode: "url", message: "Sign in", url: "https://example.com/login", elicitationId: "e1" }
    const status: Asking.Status = {
      id: "c2",
      tool: "alpha__login",
      status: "input_required",
      questions: [{ id: "c2.elicitation_1", key: "elicitation_1", method: "elicitation/create", params: url }]
    }
    assert.include(Asking.describePending(status, true), `mcpx-fx elicit answer c2.elicitation_1 '{}'`)
    const fitted = QuestionFit.fit({ method: "elicitation/create", params: url }, { action: "accept", content: JSON.parse(Asking.answerTemplate(url)) })
    assert.isTrue(Either.isRight(fitted))
  })
})

describe("an elicitation answer's check", () => {
  it("refuses a choice or list item that was not offered, and a list of the wrong length", () => {
    const refusal = (content: JsonObject) => {
      const fitted = QuestionFit.fit({ method: "elicitation/create", params }, {
        action: "accept",
        content: { ...JSON.parse(Asking.answerTemplate(params)), ...content }
      })
      return Either.isLeft(fitted) ? fitted.left : assert.fail(`accepted ${JSON.stringify(content)}`)
    }
    assert.include(refusal({ size: "m" }), `size must be one of "s", "l"`)
    assert.include(refusal({ tags: ["x", "w"] }), `tags may hold only "x", "y", "z", not "w"`)
    assert.include(refusal({ tags: ["x"] }), "tags needs at least 2 items")
    assert.include(refusal({ tags: "x" }), "tags must be an array")
  })
})
