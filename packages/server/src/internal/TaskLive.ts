/** The call behind a task while it lives in the process running it (HostTasks.ts). */
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type { Caller, InputRetry } from "../Backend.js"
import type { HandleError } from "../ServerErrors.js"
import type * as TaskQuestions from "./TaskQuestions.js"

/** Ends what an `input_required` round left waiting upstream (the task was cancelled then). */
export type Abandon = (requestState: string) => Effect.Effect<void>

export type Round = (caller: Caller, retry: InputRetry | undefined) => Effect.Effect<JsonObject, HandleError>

/** The call behind a task while it lives in this process. */
export interface Live {
  readonly caller: Caller
  readonly round: Round
  /** The round running now; undefined while the task waits for answers. */
  fiber: Fiber.RuntimeFiber<JsonObject, HandleError> | undefined
  /** The upstream's state of the round that asked, handed back with the answers. */
  requestState: string | undefined
  /** The questions not answered yet, keyed as the host sees them. */
  outstanding: JsonObject
  /** Answers that came while a round ran, for the questions the next one asks. */
  queued: JsonObject
  /** A 2025-11-25 task's questions, which its host collects with `tasks/result`. */
  readonly questions: TaskQuestions.TaskQuestions | undefined
  readonly abandon: Abandon | undefined
}
