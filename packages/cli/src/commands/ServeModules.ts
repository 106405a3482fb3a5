/** What `mcpx-fx serve` alone uses, loaded (dynamically) only when it starts. */
export * as GatewayBackend from "@mcpx-fx/gateway/GatewayBackend"
export * as Backend from "@mcpx-fx/server/Backend"
export * as BackendWhenReady from "@mcpx-fx/server/BackendWhenReady"
export * as HostTasks from "@mcpx-fx/server/HostTasks"
export * as HostTasksWhenReady from "@mcpx-fx/server/HostTasksWhenReady"
export * as Server from "@mcpx-fx/server/Server"
export * as StdioHost from "@mcpx-fx/server/StdioHost"
