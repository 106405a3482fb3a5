/** The failure of `mcpx-fx tasks result` when the task has not ended (commands/Tasks.ts). */
import * as Data from "effect/Data"

/** The task is still working, or waits for answers: the command exits 75, to be tried again later. */
export class TaskUnfinished extends Data.TaggedError("TaskUnfinished")<{ readonly taskId: string; readonly status: string }> {
  override get message(): string {
    return this.status === "input_required"
      ? `task ${this.taskId} waits for answers to its questions (see above); answer with mcpx-fx tasks answer ${this.taskId} '<json>'`
      : `task ${this.taskId} is still ${this.status}; collect it later with mcpx-fx tasks result ${this.taskId}`
  }
}
