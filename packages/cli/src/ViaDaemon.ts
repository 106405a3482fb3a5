/**
 * Whether a gateway command is answered by the running daemon or by a gateway in this process,
 * and the typed `/v1` client used for the former.
 *
 * A daemon answers when one runs for this state directory, unless the command line asks for
 * something only this invocation has: `--local`, `--config` or a setting flag (the daemon resolved
 * its settings and config when it started, so a flag could not reach it). A daemon whose files say
 * it is alive but whose socket does not answer is reported on stderr and the command runs
 * in-process, so a wedged daemon never blocks the CLI.
 *
 * Both routes print through the same Schemas (`printJson`), so `--json` output is byte-for-byte
 * the same whichever route answered.
 */
import * as Options from "@effect/cli/Options"
import * as DaemonFiles from "@mcpx-fx/daemon/DaemonFiles"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as DaemonApi from "./DaemonApi.js"
import * as DaemonClient from "./DaemonClient.js"
import type { Globals } from "./GlobalOptions.js"
import * as Output from "./Output.js"
import { UsageError } from "./UsageError.js"

/** `--local`, for the commands that can be answered by the daemon. */
export const localOption = Options.boolean("local").pipe(
  Options.withDescription(
    "Run the gateway in this process even when a daemon is running for this state directory. Without it, a " +
      "running daemon answers (sharing its upstream servers and runtime settings), except when --config or a " +
      "setting flag (e.g. --pool-call-timeout) is given: those apply to this invocation only, so it runs in-process."
  )
)

/** The sentence each command's help adds about where it runs. */
export const helpNote = "Asks the running daemon when there is one (same output either way); --local, --config or a setting flag runs it in-process."

// Long enough for a busy daemon, short enough that a stopped one (SIGSTOP, wedged) does not look
// like a hang before the in-process fallback.
const HealthWait = Duration.seconds(3)

/** The typed `/v1` client, already addressed to the daemon's socket. */
export type Client = DaemonApi.Client

// The client is made (and its module loaded) only when there is a daemon to talk to.
const makeClient = Effect.flatMap(Effect.promise(() => import("./DaemonApi.js")), (m) => m.makeClient)

/** The daemon answered, but not with what this CLI expected (it broke off, or spoke another version). */
export class DaemonRequestFailed extends Data.TaggedError("DaemonRequestFailed")<{
  readonly socket: string
  readonly detail: string
}> {
  override get message(): string {
    return `the daemon on ${this.socket} failed to answer: ${this.detail}`
  }
}

/** A command that only a running daemon can carry out found none (or none that answers). */
export class NeedsDaemon extends Data.TaggedError("NeedsDaemon")<{ readonly what: string; readonly detail: string }> {
  override get message(): string {
    return `${this.what} needs a running daemon (start one with \`mcpx-fx daemon\`): ${this.detail}`
  }
}

/** The failures of talking to the daemon itself, as opposed to the answers the API defines. */
type ClientFailure = { readonly _tag: "RequestError" | "ResponseError" | "ParseError" | "HttpApiDecodeError" }

const clientFailureTags: ReadonlySet<string> = new Set(["RequestError", "ResponseError", "ParseError", "HttpApiDecodeError"])

const isClientFailure = <E>(e: E): e is Extract<E, ClientFailure> =>
  typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" && clientFailureTags.has(e._tag)

// The API's refusals of a name (404) or a setting value (400) are the user's to fix: exit 2, with
// the error's own message, which is the one the in-process route prints too.
type NameRefusal = { readonly _tag: "UnknownName" | "UnknownSetting" | "InvalidSettingValue"; readonly message: string }

const nameRefusalTags: ReadonlySet<string> = new Set(["UnknownName", "UnknownSetting", "InvalidSettingValue"])

const isNameRefusal = <E>(e: E): e is Extract<E, NameRefusal> =>
  typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" && nameRefusalTags.has(e._tag)

const detailOf = (e: unknown): string => typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : String(e)

const mapFailures = (socket: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.catchIf(isClientFailure, (e) => Effect.fail(new DaemonRequestFailed({ socket, detail: detailOf(e) }))),
    Effect.catchIf(isNameRefusal, (e) => Effect.fail(new UsageError({ message: e.message })))
  )

/** The daemon, if one runs and answers `/v1/health` over its socket; why not, otherwise. */
export const reach = <A, E, R>(
  info: DaemonFiles.DaemonInfo,
  use: (client: Client) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const client = yield* makeClient
    const health = yield* client.system.health().pipe(
      Effect.timeoutFail({ duration: HealthWait, onTimeout: () => `no answer within ${Duration.format(HealthWait)}` }),
      Effect.mapError((e) => (typeof e === "string" ? e : detailOf(e))),
      Effect.either
    )
    if (health._tag === "Left") return { _tag: "Unreachable" as const, detail: health.left }
    return { _tag: "Answered" as const, value: yield* mapFailures(info.socket)(use(client)) }
  }).pipe(Effect.provide(DaemonClient.socketClient(info.socket)))

/** Whether this command line may be answered by the daemon at all. */
export const daemonMayAnswer = (globals: Globals, local: boolean): boolean => !local && Option.isNone(globals.config) && Object.keys(globals.flags).length === 0

/**
 * Runs `daemon` against the running daemon when there is one (and the command line allows it),
 * `inProcess` otherwise — including when the daemon's socket does not answer, with a warning.
 */
export const orInProcess = <A, E1, R1, E2, R2>(
  globals: Globals,
  local: boolean,
  routes: {
    readonly daemon: (client: Client) => Effect.Effect<A, E1, R1>
    readonly inProcess: Effect.Effect<A, E2, R2>
  }
) =>
  Effect.gen(function*() {
    if (!daemonMayAnswer(globals, local)) return yield* routes.inProcess
    const info = yield* DaemonClient.running
    if (Option.isNone(info)) return yield* routes.inProcess
    const outcome = yield* reach(info.value, routes.daemon)
    if (outcome._tag === "Answered") return outcome.value
    yield* Console.error(
      `mcpx-fx: warning: the daemon (pid ${info.value.pid}) did not answer on ${info.value.socket} ` +
        `(${outcome.detail}); running in-process`
    )
    return yield* routes.inProcess
  })

/** Runs `use` against the running daemon, or fails with `NeedsDaemon` naming `what` was asked. */
export const required = <A, E, R>(
  what: string,
  use: (client: Client) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const info = yield* DaemonClient.running
    if (Option.isNone(info)) {
      const files = yield* Effect.provide(DaemonFiles.paths, DaemonClient.stateDir)
      return yield* new NeedsDaemon({ what, detail: `none is running for the state directory ${files.stateDir}` })
    }
    const outcome = yield* reach(info.value, use)
    if (outcome._tag === "Answered") return outcome.value
    return yield* new NeedsDaemon({
      what,
      detail: `the daemon (pid ${info.value.pid}) did not answer on ${info.value.socket} (${outcome.detail})`
    })
  })

/**
 * Prints a body as the API's Schema encodes it: the same keys in the same order whether the value
 * came from the daemon (decoded by the client) or from the gateway in this process.
 */
export const printJson = <A, I>(schema: Schema.Schema<A, I>, value: A): Effect.Effect<void> =>
  Effect.flatMap(Effect.orDie(Schema.encode(schema)(value)), Output.json)
