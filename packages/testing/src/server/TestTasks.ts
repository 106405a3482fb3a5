/**
 * Host tasks for tests: the real engine on the real SQL store, in an in-memory SQLite database
 * that ends with the layer, so every test starts with no tasks and leaves no file behind.
 */
import * as HostTasks from "@mcpx-fx/server/HostTasks"
import * as TaskPolicy from "@mcpx-fx/server/TaskPolicy"
import * as SqlTaskStore from "@mcpx-fx/store/SqlTaskStore"
import * as Layer from "effect/Layer"

/** The engine under `policy` on a fresh in-memory store. */
export const layerWith = (policy: TaskPolicy.TaskPolicy): Layer.Layer<HostTasks.HostTasks> =>
  HostTasks.HostTasks.layer(policy).pipe(Layer.provide(SqlTaskStore.layerSqlite(":memory:")), Layer.orDie)

/** The engine under the default policy on a fresh in-memory store. */
export const layer: Layer.Layer<HostTasks.HostTasks> = layerWith(TaskPolicy.DefaultPolicy)
