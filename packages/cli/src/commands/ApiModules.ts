/**
 * The `/v1` API's Schemas and in-process handlers, and the asking of `call`: what the commands that
 * print the API's shapes or answer in-process use, loaded (dynamically, by LazyApi.ts) when one of
 * them runs, so that `serve` and the rest start without the HttpApi definitions and what they pull in.
 */
export * as Api from "@mcpx-fx/gateway/Api"
export * as ApiHandlers from "@mcpx-fx/gateway/ApiHandlers"
export * as AskApi from "@mcpx-fx/gateway/AskApi"
export * as Asking from "../Asking.js"
