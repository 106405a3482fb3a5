/**
 * What an HTTP adapter may offer so that a legacy session's request can run in its POST's own
 * fiber. The legacy revisions say a dropped connection is not a cancellation, but an adapter (the
 * platform's, and ours by default) interrupts a request's fiber when its client goes away; that
 * is why such a request otherwise runs in a fiber of its own. A request object that carries
 * `Detach` can be told, once, that its client's going away must not interrupt it: the adapter
 * then lets the fiber run to its end and drops the reply.
 *
 * The request can still be ended: `notifications/cancelled` and the end of the session interrupt
 * the fiber itself. An adapter that offers `Detach` must then write the response such a fiber's
 * cause carries (`carriedResponse`), when it carries one, as the platform's web handler does.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"

export const Detach: unique symbol = Symbol.for("mcpx-fx/server/ClientDetach")

/** A request whose adapter can stop interrupting it when its client goes away. */
export interface Detachable {
  [Detach](): void
}

export const isDetachable = (request: object): request is Detachable => typeof (request as Partial<Detachable>)[Detach] === "function"

/** The response a failed request's cause carries as a defect (how a cancelled request is still answered). */
export const carriedResponse = (cause: Cause.Cause<unknown>): HttpServerResponse.HttpServerResponse | undefined =>
  Option.getOrUndefined(
    Cause.find(cause, (c) => Cause.isDieType(c) && HttpServerResponse.isServerResponse(c.defect) ? Option.some(c.defect) : Option.none())
  )
