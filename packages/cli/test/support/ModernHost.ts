/**
 * A 2026-07-28 host the same test can drive over each way a host reaches mcpx-fx: `mcpx-fx serve`
 * (stdio), `mcpx-fx serve --relay` (stdio, carried to a daemon) and the daemon's `/mcp` (HTTP).
 * Each request carries its own `_meta` (version, identity, the capabilities it declares), and a
 * request can be abandoned the way that transport allows: `notifications/cancelled` on stdio,
 * closing the POST on HTTP.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { type Endpoint, modernRequest } from "./HttpMcp.js"
import { speaking } from "./Revisions.js"
import type { Message, Serve } from "./StdioServe.js"

/** How the host reaches mcpx-fx. */
export type Via = "stdio" | "relay" | "http"

/** A request in flight. */
export interface InFlight {
  /** Its reply. */
  readonly reply: Effect.Effect<Message>
  /** Walks away from it: `notifications/cancelled` on stdio, the POST closed on HTTP. */
  readonly abandon: Effect.Effect<void>
}

/** A 2026-07-28 host. */
export interface ModernHost {
  readonly via: Via
  /** A request declaring `capabilities`; its reply. */
  readonly request: (id: string, method: string, params: Message, capabilities: Message) => Effect.Effect<Message>
  /** A request left in flight. */
  readonly begin: (id: string, method: string, params: Message, capabilities: Message) => Effect.Effect<InFlight, never, Scope.Scope>
}

/** A host on a running `mcpx-fx serve` (with or without `--relay`). */
export const overStdio = (serve: Serve, via: "stdio" | "relay"): ModernHost => {
  const host = (capabilities: Message) => speaking(serve, "2026-07-28", capabilities)
  return {
    via,
    request: (id, method, params, capabilities) => host(capabilities).request(id, method, params),
    begin: (id, method, params, capabilities) =>
      Effect.as(host(capabilities).send(id, method, params), {
        reply: serve.reply(id),
        abandon: serve.send({ method: "notifications/cancelled", params: { requestId: id, reason: "the host walked away" } })
      })
  }
}

const asMessage = (body: unknown, text: string): Effect.Effect<Message> =>
  typeof body === "object" && body !== null && !Array.isArray(body)
    ? Effect.succeed(body as Message)
    : Effect.dieMessage(`expected one JSON-RPC message, got: ${text}`)

/** A host on the daemon's `/mcp`. */
export const overHttp = (http: Endpoint): ModernHost => ({
  via: "http",
  request: (id, method, params, capabilities) =>
    Effect.flatMap(modernRequest(http, id, method, params, capabilities), (reply) => asMessage(reply.body, `${reply.status} ${reply.text}`)),
  // The POST runs in a fiber of its own: a JSON reply sends no headers before the result, so
  // the request is in flight until then, and interrupting the fiber closes the connection.
  begin: (id, method, params, capabilities) =>
    Effect.map(Effect.forkScoped(modernRequest(http, id, method, params, capabilities)), (fiber) => ({
      reply: Effect.flatMap(Fiber.join(fiber), (reply) => asMessage(reply.body, `${reply.status} ${reply.text}`)),
      abandon: Fiber.interrupt(fiber)
    }))
})
