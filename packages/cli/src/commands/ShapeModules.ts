/**
 * The `/v1` API's bodies and the shaping the in-process commands share with it (`tools`, `search`,
 * `probe`, `protocol`, `status`): loaded (dynamically, by LazyApi.ts) when one of them runs, and
 * without the HttpApi definitions, which only the daemon and its client need.
 */
export * as ApiBodies from "@mcpx-fx/daemon/ApiBodies"
export * as ApiShaping from "@mcpx-fx/daemon/ApiShaping"
