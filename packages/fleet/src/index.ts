/**
 * @mcpx-fx/fleet: the fleet engine, several mcpx-fx daemons reaching the process that holds a live call.
 */
/** The Fleet port over NATS request-reply. */
export * as NatsFleet from "./NatsFleet.js"
