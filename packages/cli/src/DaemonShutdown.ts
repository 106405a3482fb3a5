/**
 * `/v1` at shutdown, loaded with the rest of what only a daemon runs (DaemonModules.ts).
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Shutdown from "@mcpx-fx/server/Shutdown"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const shuttingDown = HttpServerResponse.unsafeJson(
  { error: "mcpx-fx is shutting down: the request was cancelled before it finished" },
  { status: 503 }
)

/**
 * `/v1` at shutdown: its event streams end when the daemon starts to stop, and a request still
 * running when the grace is over is cancelled and answered 503 (without waiting for its cleanup).
 * A request that fails once the grace is over (an error, or a 5xx answer) failed because its
 * upstream call was cut short by the stop: it is answered the same 503.
 */
export const stopsWith = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>, shutdown: Shutdown.ShutdownSignals) =>
  Effect.interruptible(Effect.raceFirst(
    Effect.disconnect(Effect.map(
      Effect.catchAllCause(app, (cause) => (shutdown.stoppingNow() ? Effect.succeed(shuttingDown) : Effect.failCause(cause))),
      (response) =>
        shutdown.stoppingNow() && response.status >= 500
          ? shuttingDown
          : response.body._tag === "Stream"
          ? HttpServerResponse.setBody(
            response,
            HttpBody.stream(Stream.interruptWhen(response.body.stream, shutdown.draining), response.body.contentType, response.body.contentLength)
          )
          : response
    )),
    Effect.as(shutdown.stopping, shuttingDown)
  ))
