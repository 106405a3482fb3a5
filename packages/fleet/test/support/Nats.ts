/** One fleet instance over the real NATS of the test machines (127.0.0.1:4222; CI starts it). */
import * as NatsFleet from "@mcpx-fx/fleet/NatsFleet"
import { Fleet, processIdOf } from "@mcpx-fx/server/Fleet"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"

export const Nats = "nats://127.0.0.1:4222"

/** A fleet of the test's own name. */
export const fleetName = () => `t${randomBytes(6).toString("hex")}`

/** One instance of `name`, open for the scope given (so a test can close it early). */
export const instance = (name: string, scope: Scope.Scope, maxPayloadBytes?: number) =>
  Effect.map(
    Layer.buildWithScope(
      NatsFleet.layer({ servers: Nats, name, instance: processIdOf("test"), ...(maxPayloadBytes === undefined ? {} : { maxPayloadBytes }) }),
      scope
    ),
    (context) => Context.get(context, Fleet)
  )
