/** What `call` and `elicit` use to ask and answer questions, loaded (by LazyApi.ts) when one of them runs. */
export * as AskApi from "@mcpx-fx/daemon/AskApi"
export * as Asking from "../Asking.js"
