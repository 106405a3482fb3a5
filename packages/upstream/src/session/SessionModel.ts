/**
 * What a session is to its users: the handshake's outcome, what a caller hands each call, the
 * session's surface and the options every session shares (Session.ts makes one).
 */
import type { Implementation } from "@mcpx-fx/protocol/Implementation"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import type * as Meta from "@mcpx-fx/protocol/Meta"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { Question, QuestionHandler, QuestionRefused } from "./Questions.js"
import type { SessionError } from "./SessionErrors.js"
import type { Connection, TransportClosed, TransportError } from "../transport/Transport.js"

/** How a session's era was decided. */
export type EraSource = "probe" | "cache" | "forced"

/** What the handshake (initialize or discover) established. */
export interface Established {
  readonly era: Revision.Era
  readonly negotiated: Revision.Revision
  readonly eraSource: EraSource
  readonly serverInfo: JsonObject | undefined
  readonly capabilities: JsonObject
  readonly instructions: string | undefined
}

/** What a caller hands a session with each call. */
export interface CallContext {
  /** Answers this call's server→client questions (legacy) or input requests (modern, "resolve"). */
  readonly questions?: QuestionHandler
  /**
   * Who made the call (a host session or connection). A stdio question that names no call is
   * routed only when every call in flight that has a handler has the same caller; a call without
   * one is a caller of its own.
   */
  readonly callerId?: string
  /** Receives notifications tied to this call (progress, log messages). */
  readonly onNotification?: (notification: JsonRpc.Notification) => Effect.Effect<void>
  /**
   * Modern upstreams: the lowest level of log messages this call wants (`_meta` logLevel); absent,
   * the upstream sends none. Legacy upstreams have a session-wide level instead.
   */
  readonly logLevel?: Meta.LoggingLevel
  /** Modern upstreams: the capabilities to declare for this call (a host's own); default the session's. */
  readonly clientCapabilities?: JsonObject
  /**
   * Modern upstreams: an `input_required` result is returned as is ("return", for a modern caller
   * who retries itself) or resolved here through `questions` and retried ("resolve").
   */
  readonly inputRequired?: "return" | "resolve"
  /**
   * Told when the upstream makes this call a task (TaskCall): the call will run on, so a caller
   * that can hand its own caller a task should do it now rather than wait.
   */
  readonly onTask?: Effect.Effect<void>
  /**
   * The upstream task this request waits on (TaskCall's `tasks/result`): a question that names
   * the task in its related-task `_meta` is this call's, wherever it arrives.
   */
  readonly task?: string
  /**
   * Set by a caller that may walk away from a round of questions and leave the call waiting (a
   * 2026-07-28 host's pending call): whether the call is parked on that caller's answer now.
   */
  readonly parked?: Parked
}

/**
 * A call parked on its caller's answer: its round was handed to a caller who has not come back,
 * and nothing else moves it. The Pool may end it so its process serves another caller.
 */
export interface Parked {
  /** When the round now waiting was handed out (epoch ms); undefined while the call is not parked. */
  readonly since: () => number | undefined
  /**
   * Ends the call on its caller's behalf, as if the caller had abandoned it: its questions
   * answered as nobody could answer them, the upstream request cancelled, a late retry refused.
   */
  readonly giveWay: Effect.Effect<void>
}

/** A live, negotiated upstream connection. */
export interface Session extends Established {
  readonly name: string
  readonly wire: Connection["wire"]
  /**
   * Whether a request on this session only ever waits for its answer from a connection that ends
   * that wait when the call is cut in place (a legacy session over stdio or Streamable HTTP): the Pool then runs its
   * calls without a fiber of their own.
   */
  readonly runsInPlace: boolean
  /**
   * Whether a request made with `ctx` only waits for its answer the same way: every request when
   * `runsInPlace`, and on a modern stdio or Streamable HTTP session one whose `input_required`
   * goes back to its caller as is (one round, nothing waited on between rounds) and that follows
   * no task (a listing for its `Mcp-Param-*` headers, when one is needed, goes out of place).
   */
  readonly runsInPlaceFor: (ctx: CallContext) => boolean
  /** Sends a request and returns the raw result object (unknown fields intact). */
  readonly request: (method: string, params?: JsonObject, ctx?: CallContext) => Effect.Effect<JsonObject, SessionError>
  /** Sends a notification. */
  readonly notify: (method: string, params?: JsonObject) => Effect.Effect<void, TransportError>
  /** Notifications tied to no call (list_changed, resources/updated, untied messages). */
  readonly events: Stream.Stream<JsonRpc.Notification>
  /** The same notifications as a subscription that is in place once this returns (nothing after it is missed). */
  readonly subscribe: Effect.Effect<Queue.Dequeue<JsonRpc.Notification>, never, Scope.Scope>
  /** Completes once the connection is closed. */
  readonly closed: Effect.Effect<TransportClosed>
  /** The last bytes the upstream wrote on stderr (stdio). */
  readonly stderrTail: Effect.Effect<string>
  /** stdio only: when the upstream last wrote anything (Connection.heardAt). */
  readonly heardAt?: () => number
  /**
   * HTTP: why this session's era is in doubt, once it is: a modern request refused as only a server
   * that is not modern refuses it, or a legacy one refused as only a modern server refuses it
   * (-32022, an HTTP error with a modern error, a forgotten session whose `initialize` is refused).
   * Always none over stdio.
   */
  readonly eraDoubt: Effect.Effect<Option.Option<string>>
  /**
   * Whether the session is held only by calls parked on their callers' answers (CallContext.parked):
   * when the latest of them was parked, and how to end them all; undefined while any call in flight
   * is not parked, or none is in flight.
   */
  readonly parked?: () => ParkedCalls | undefined
}

/** The calls a session holds, all parked on their callers' answers. */
export interface ParkedCalls {
  readonly since: number
  readonly giveWay: Effect.Effect<void>
}

/** Options every session shares. */
export interface SessionOptions {
  readonly clientInfo: Implementation
  /** Capabilities declared when a call brings none of its own. */
  readonly clientCapabilities: JsonObject
  /** How many `input_required` rounds a "resolve" call may take. */
  readonly maxInputRounds?: number
  /** Legacy sessions: how long the start waits for the GET notification stream to open (default 5 s). */
  readonly notificationStreamWait?: Duration.DurationInput
  /**
   * Answers a stdio question that names no call while calls of several callers are in flight
   * (`callers` of them), so it cannot be told whose it is. Absent: answered as if nobody could be
   * asked (`answerAlone`).
   */
  readonly unattributed?: (server: string, question: Question, callers: number) => Effect.Effect<JsonObject, QuestionRefused>
  /**
   * How long after a call's first untied question others it asks still count as asked with it (a
   * caller's round gathers them for `questions.gather`); after that, the call is parked on its
   * caller's answer and no longer a candidate for another caller's question. Read when a question
   * comes; default 50 ms.
   */
  readonly askedTogether?: Effect.Effect<Duration.DurationInput>
}
