/**
 * Multi round-trip requests (MRTR), the modern replacement for server→client requests.
 *
 * A `tools/call`, `prompts/get` or `resources/read` may answer `resultType: "input_required"` with
 * `inputRequests` (key → `{method, params}` of an elicitation, sampling or roots request) and/or an
 * opaque `requestState`. The client retries the same method and params plus `inputResponses` (same
 * keys) and the `requestState` it was given.
 */
import * as Schema from "effect/Schema"
import * as Method from "./Method.js"
import { ElicitParams, ElicitResult } from "./Elicitation.js"
import { isJsonObject, JsonObject, open, optionalKey } from "./Json.js"
import { ResultMeta } from "./Meta.js"
import { ListRootsParams, ListRootsResult } from "./Roots.js"
import { CreateMessageParams, CreateMessageResult } from "./Sampling.js"

/** An elicitation the server needs answered. */
export const ElicitInputRequest = open({ method: Schema.Literal(Method.ElicitationCreate), params: ElicitParams })
/** A sampling the server needs answered. */
export const SamplingInputRequest = open({ method: Schema.Literal(Method.SamplingCreateMessage), params: CreateMessageParams })
/** A roots listing the server needs answered. */
export const RootsInputRequest = open({ method: Schema.Literal(Method.RootsList), params: optionalKey(ListRootsParams) })

/** One input request: `{method, params}`, no `jsonrpc`, no `id`, no per-request `_meta`. */
export const InputRequest = Schema.Union(ElicitInputRequest, SamplingInputRequest, RootsInputRequest)
/** One input request. */
export type InputRequest = typeof InputRequest.Type

/** Server-assigned key → input request. */
export const InputRequests = Schema.Record({ key: Schema.String, value: InputRequest })
/** Server-assigned key → input request. */
export type InputRequests = typeof InputRequests.Type

/** One answer: the result the equivalent legacy request would have had. */
export const InputResponse = Schema.Union(ElicitResult, CreateMessageResult, ListRootsResult)
/** One answer. */
export type InputResponse = typeof InputResponse.Type

/** Key (as in `inputRequests`) → answer. */
export const InputResponses = Schema.Record({ key: Schema.String, value: InputResponse })
/** Key → answer. */
export type InputResponses = typeof InputResponses.Type

/** The `input_required` result. At least one of `inputRequests` and `requestState` is present. */
export const InputRequiredResult = open({
  resultType: Schema.Literal("input_required"),
  inputRequests: optionalKey(InputRequests),
  requestState: optionalKey(Schema.String),
  _meta: optionalKey(ResultMeta)
}).pipe(
  Schema.filter((r) => r.inputRequests !== undefined || r.requestState !== undefined || "an input_required result needs inputRequests or requestState")
)
/** The `input_required` result. */
export type InputRequiredResult = typeof InputRequiredResult.Type

/** The retry fields, to spread into the params of the three methods that allow MRTR. */
export const retryFields = {
  inputResponses: optionalKey(InputResponses),
  requestState: optionalKey(Schema.String)
}

/** The retry fields on their own, other params kept. */
export const RetryParams = open(retryFields)
/** The retry fields. */
export type RetryParams = typeof RetryParams.Type

/** Whether a raw result asks for input. */
export const isInputRequired = (result: JsonObject): boolean => result.resultType === "input_required"

/** Whether raw params are a retry (and so must not be served from or stored in a cache). */
export const isRetry = (params: unknown): boolean => isJsonObject(params) && (params.inputResponses !== undefined || params.requestState !== undefined)

/** Builds an `input_required` result. */
export const inputRequired = (options: {
  readonly inputRequests?: { readonly [key: string]: JsonObject }
  readonly requestState?: string
}): JsonObject => ({
  resultType: "input_required",
  ...(options.inputRequests !== undefined ? { inputRequests: options.inputRequests } : {}),
  ...(options.requestState !== undefined ? { requestState: options.requestState } : {})
})
