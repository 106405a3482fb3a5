/**
 * The exit code of a finished command, and the message that goes with it. It is decided here, in
 * one place, from the typed failure: 2 when the user can fix the command line or a config file,
 * 75 when a server asked a question nobody answered (or a task has not ended yet), 77 when an upstream needs `mcpx-fx auth
 * login`, 1 for anything else.
 */
import * as ValidationError from "@effect/cli/ValidationError"
import * as ConfigFile from "@mcpx-fx/config/ConfigFile"
import * as SettingsModel from "@mcpx-fx/config/SettingsModel"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { QuestionsPending } from "./QuestionsPending.js"
import { TaskUnfinished } from "./TaskUnfinished.js"
import { UsageError } from "./UsageError.js"

/** The command did what was asked. */
export const Ok = 0
/** The command failed for a reason other than how it was invoked or configured. */
export const Failure = 1
/** A usage or configuration error. */
export const Usage = 2
/** A server asked a question that nobody answered (EX_TEMPFAIL): the call may be answered later. */
export const QuestionPending = 75
/** An upstream needs authorization: `mcpx-fx auth login <server>` (sysexits' EX_NOPERM). */
export const NeedsAuthorization = 77
/** Interrupted by SIGINT/SIGTERM, as shells report it. */
export const Interrupted = 130

const tagOf = (e: unknown): unknown => (typeof e === "object" && e !== null && "_tag" in e ? e._tag : undefined)

/** The upstream's own AuthorizationRequired, or the daemon's or gateway's retelling of it. */
const needsAuthorization = (e: unknown): boolean =>
  tagOf(e) === "AuthorizationRequired" ||
  (tagOf(e) === "UpstreamFailed" && (e as { readonly kind?: unknown }).kind === "AuthorizationRequired") ||
  (tagOf(e) === "PoolError" && (e as { readonly authorizationRequired?: unknown }).authorizationRequired === true)

const isUsage = (e: unknown): boolean => e instanceof UsageError || e instanceof ConfigFile.ConfigError || e instanceof SettingsModel.SettingsError

const messageOf = (e: unknown): Option.Option<string> =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" && e.message !== ""
    ? Option.some(e.message)
    : Option.none()

/**
 * Prints why the command failed on stderr and returns the exit code. @effect/cli has already
 * printed its own validation errors (with the usage), so those are only mapped to 2.
 */
export const report = (cause: Cause.Cause<unknown>): Effect.Effect<number> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.succeed(Interrupted)
  return Option.match(Cause.failureOption(cause), {
    onNone: () => Effect.as(Console.error(`mcpx-fx: internal error\n${Cause.pretty(cause)}`), Failure),
    onSome: (e) => {
      if (ValidationError.isValidationError(e)) return Effect.succeed(Usage)
      const message = Option.getOrElse(messageOf(e), () => Cause.pretty(cause))
      const code = isUsage(e)
        ? Usage
        : e instanceof QuestionsPending || e instanceof TaskUnfinished
        ? QuestionPending
        : needsAuthorization(e)
        ? NeedsAuthorization
        : Failure
      return Effect.as(Console.error(`mcpx-fx: ${message}`), code)
    }
  })
}
