/** The failure of `mcpx-fx call` when a tool asked what nobody here could answer (Asking.ts). */
import * as Data from "effect/Data"

/** A question nobody at a terminal could answer: the command exits 75. */
export class QuestionsPending extends Data.TaggedError("QuestionsPending")<{
  readonly tool: string
  readonly kept: boolean
  /** What it asked, when it was of a kind nobody here can answer at all (sampling). */
  readonly asked?: string
}> {
  override get message(): string {
    return this.kept
      ? `${this.tool} is waiting for an answer (see above); it is kept by the daemon until answered or expired`
      : `${this.tool} asked a question that nobody here could answer${this.asked === undefined ? "" : ` (${this.asked})`}; the call was cancelled`
  }
}
