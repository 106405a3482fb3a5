/**
 * What a transport hands the Server with each message: the connection it came on (the legacy
 * negotiation, kept per stdio process or legacy HTTP session) and what the transport can carry
 * besides the reply (questions, progress, subscriptions).
 */
import type { Implementation } from "@mcpx-fx/protocol/Implementation"
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import type * as Meta from "@mcpx-fx/protocol/Meta"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { NotificationChannel, QuestionChannel, ResolvedTool } from "../Backend.js"
import type * as Subscriptions from "../Subscriptions.js"

/** What a legacy `initialize` settled for a connection. */
export interface Negotiated {
  readonly revision: Revision.LegacyRevision
  readonly clientCapabilities: JsonObject
  readonly clientInfo: Implementation
  /** Whether `notifications/initialized` has arrived. */
  readonly initialized: boolean
  readonly logLevel?: Meta.LoggingLevel
}

/**
 * One host connection (a stdio process, a legacy HTTP session): the legacy negotiation, if any.
 * Modern requests never read it.
 */
export interface Connection {
  /** The legacy session id (stdio: a connection id); the fallback identity of legacy callers. */
  readonly id: string
  readonly negotiated: Ref.Ref<Option.Option<Negotiated>>
}

/** A fresh connection with nothing negotiated. */
export const makeConnection = (id: string): Effect.Effect<Connection> => Effect.map(Ref.make(Option.none<Negotiated>()), (negotiated) => ({ id, negotiated }))

/** The revision a connection negotiated, if any (a transport needs it for batches and headers). */
export const negotiatedRevision = (connection: Connection): Effect.Effect<Revision.LegacyRevision | undefined> =>
  Effect.map(Ref.get(connection.negotiated), Option.match({ onNone: () => undefined, onSome: (n) => n.revision }))

/** What the transport knows about one message besides the message itself. */
export interface RequestContext {
  readonly connection: Connection
  /**
   * For a legacy request outside any negotiated session (sessionless Streamable HTTP), the
   * revision its transport decided it speaks; ignored once the connection has negotiated.
   */
  readonly legacyRevision?: Revision.LegacyRevision
  /** Asks this request's host questions, when the transport can carry server→client requests. */
  readonly questions?: QuestionChannel
  /**
   * Whether `questions` is the connection's (stdio) rather than this request's (an HTTP POST's
   * stream): only then can it still ask once the request has answered, as a task's call may.
   */
  readonly connectionQuestions?: boolean
  /** Tells this request's host of its progress and log messages, when the transport can. */
  readonly notify?: NotificationChannel
  /** How this request's transport carries subscriptions (listen notifications, legacy resource watches). */
  readonly subscriptions?: Subscriptions.Channel
  /**
   * The Backend's resolution of the tool a modern `tools/call` names, made for its header check
   * (HttpModern), for the Server to hand to the call as `Caller.resolved`. Undefined: none made.
   */
  readonly resolved?: ResolvedTool | undefined
}
