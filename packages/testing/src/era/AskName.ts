/**
 * `ask_name`: the one tool that asks the client a question, in the serving era's way. Legacy asks
 * with a server→client `elicitation/create` request on the request's channel; modern answers
 * `input_required` (MRTR) and finishes on the retry that carries `inputResponses`.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as Revision from "@mcpx-fx/protocol/Revision"
import type { Context } from "./Context.js"
import { cancelled, error, type Outcome, text } from "./Outcome.js"
import { isFailure, isObject, type Json, type JsonObject, type Response } from "./Wire.js"

/** Sends a server→client request tied to the current call; undefined when the call was cancelled. */
export type Ask = (method: string, params: JsonObject, signal: AbortSignal) => Promise<Response | undefined>

export type Asking =
  | { readonly _tag: "legacy"; readonly version: string; readonly declared: boolean; readonly ask: Ask }
  | {
    readonly _tag: "modern"
    readonly declared: boolean
    readonly inputResponses: JsonObject | undefined
    readonly requestState: string | undefined
  }

const requestedSchema: JsonObject = {
  type: "object",
  properties: { name: { type: "string", description: "Your name" } },
  required: ["name"]
}
const message = "What is your name?"

const answer = (elicitResult: Json | undefined): Outcome => {
  if (!isObject(elicitResult)) return text("no name (malformed answer)", true)
  const action = elicitResult["action"]
  const content = elicitResult["content"]
  const name = isObject(content) ? content["name"] : undefined
  if (action === "accept" && typeof name === "string") return text(`hello, ${name}`)
  return text(`no name (${typeof action === "string" ? action : "malformed answer"})`)
}

// Signed so a tampered or foreign state is refused rather than trusted, as MRTR requires of any
// state that steers the server; the fixture keeps nothing between rounds.
const sign = (secret: Buffer, payload: JsonObject): string => {
  const body = Buffer.from(JSON.stringify(payload)).toString("base64url")
  return `${body}.${createHmac("sha256", secret).update(body).digest("base64url")}`
}

const verify = (secret: Buffer, state: string): boolean => {
  const dot = state.indexOf(".")
  if (dot < 0) return false
  const expected = Buffer.from(createHmac("sha256", secret).update(state.slice(0, dot)).digest("base64url"))
  const given = Buffer.from(state.slice(dot + 1))
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const inputRequired = (ctx: Context, round: number): Outcome => ({
  _tag: "input_required",
  inputRequests: {
    name: { method: "elicitation/create", params: { mode: "form", message, requestedSchema } }
  },
  requestState: sign(ctx.secret, { tool: "ask_name", round })
})

export const run = async (ctx: Context, asking: Asking, signal: AbortSignal): Promise<Outcome> => {
  if (asking._tag === "modern") {
    if (!asking.declared) {
      return error(ErrorCode.MissingRequiredClientCapability, "ask_name needs the elicitation capability", {
        requiredCapabilities: { elicitation: {} }
      })
    }
    if (asking.inputResponses === undefined) return inputRequired(ctx, 1)
    if (asking.requestState === undefined || !verify(ctx.secret, asking.requestState)) {
      return error(ErrorCode.InvalidParams, "invalid or missing requestState")
    }
    const response = asking.inputResponses["name"]
    // A retry without the answer we need is asked again, not failed (MRTR: missing inputs).
    return response === undefined ? inputRequired(ctx, 2) : answer(response)
  }
  // A legacy client that did not declare elicitation must not be sent elicitation/create.
  if (!asking.declared) return text("no name (elicitation not declared)", true)
  const params: JsonObject = Revision.atLeast(asking.version, "2025-11-25")
    ? { mode: "form", message, requestedSchema }
    : { message, requestedSchema }
  const reply = await asking.ask("elicitation/create", params, signal)
  if (reply === undefined) return cancelled
  if (isFailure(reply)) return text(`no name (error ${reply.error.code})`, true)
  return answer(reply.result)
}
