/**
 * What an HTTP adapter may offer when a request's whole body is in memory before the app runs
 * (NodeHttpApp reads a small one first, which is every tool call's): the bytes as they came, a
 * view into the socket's read. `arrayBuffer` must hand over a buffer of the body's own, a copy
 * outside V8's heap per request; the endpoint decodes the view in place instead.
 */
export const BodyAtHand: unique symbol = Symbol.for("mcpx-fx/server/BodyAtHand")

/** A request whose adapter may hold its body already (undefined when it does not). */
export interface WithBodyAtHand {
  readonly [BodyAtHand]: Uint8Array | undefined
}

/** The request's body when its adapter holds it already. */
export const of = (request: object): Uint8Array | undefined => (request as Partial<WithBodyAtHand>)[BodyAtHand]
