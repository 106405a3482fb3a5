/**
 * What the gateway-backed commands share: the gateway for this invocation, and the errors that
 * mean the user named something that does not exist (exit 2) rather than that something broke.
 */
import * as Gateway from "@mcpx-fx/gateway/Gateway"
import * as GatewayModel from "@mcpx-fx/gateway/GatewayModel"
import * as Effect from "effect/Effect"
import type * as GlobalOptions from "../GlobalOptions.js"
import * as Layers from "../Layers.js"
import * as Progress from "../Progress.js"
import { UsageError } from "../UsageError.js"

/** Runs `use` with this invocation's gateway; unknown names become usage errors. */
export const withGateway = <A, E, R>(
  globals: GlobalOptions.Globals,
  use: (gateway: Gateway.Gateway["Type"]) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    // A long start (npx fetching an upstream) should not look like a hang to a person watching.
    if (process.stderr.isTTY) yield* Progress.show((text) => process.stderr.write(text))
    return yield* Effect.flatMap(Gateway.Gateway, use)
  }).pipe(
    Effect.catchIf(
      (e): e is E & GatewayModel.UnknownName => e instanceof GatewayModel.UnknownName,
      (e) => Effect.fail(new UsageError({ message: e.message }))
    ),
    // One answer and done: a failed upstream start is this command's to report, once.
    Effect.provide(Layers.gateway(globals, { oneShot: true })),
    Effect.scoped
  )
