/** What `tasks` prints its `--json` bodies with, loaded (by LazyApi.ts) when it runs. */
export * as TasksApi from "@mcpx-fx/daemon/TasksApi"
