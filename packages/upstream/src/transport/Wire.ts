/**
 * The HTTP exchanges of the Streamable HTTP transport, on undici's dispatcher with kept-alive
 * connections.
 *
 * The transport sends one POST per message, so what an exchange costs is paid on every call. A
 * general HttpClient (request and response objects, middleware, a Stream per body, a span per
 * request) cost several times the whole rest of a call through mcpx-fx, and node:http's client
 * (a ClientRequest and an IncomingMessage, each a stream with its listeners) twice what undici's
 * dispatcher costs for the same POST; this does only what the transport needs: a request out, the
 * status and headers in, and the body read whole under a cap or chunk by chunk for server-sent
 * events, each exchange one handler object. A request's POST goes further (`dispatch`): its
 * reader takes the body in place as undici hands it over, and no fiber runs until the reply is read.
 *
 * An exchange is tied to a scope: closing it before the body was read aborts the request (and its
 * connection), which is how a closed POST tells a modern server that its request was abandoned.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Members } from "@mcpx-fx/cancel/InFlight"
import { Exchange, unreachable } from "./internal/UndiciExchange.js"
import type { TransportClosed } from "./Transport.js"
import type { BodyReader, WireExchange, WireRequest, WireResponse } from "./WireModel.js"

export type { BodyReader, WireExchange, WireRequest, WireResponse } from "./WireModel.js"

/** Sends requests; each response lives as long as the scope it was sent in. */
export interface Wire {
  readonly send: (request: WireRequest) => Effect.Effect<WireResponse, TransportClosed, Scope.Scope>
  /**
   * Sends `request` with `reader` hearing its outcome in place: for a sender that waits on what
   * the reader makes of the answer, once, rather than on the answer's start and then on each chunk.
   * The sender releases the exchange when it is done with it.
   */
  readonly dispatch: (request: WireRequest, reader: BodyReader) => WireExchange
  /** Aborts every exchange in flight (their connection is closing); the wire stays usable. */
  readonly abortInFlight: Effect.Effect<void>
}

/** What a client that only sends exchanges, each tied to a scope, needs of a wire. */
export type Sender = Pick<Wire, "send">

/** Header records as one with lower-case names, later ones winning, as HTTP reads them. */
export const mergeHeaders = (...records: ReadonlyArray<Readonly<Record<string, string>> | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const record of records) {
    if (record === undefined) continue
    for (const name in record) out[name.toLowerCase()] = record[name]!
  }
  return out
}

/** Where one request goes, parsed once per URL. */
interface Target {
  readonly origin: string
  readonly path: string
}

/** The chunks of a response's body as a Stream, for the readers that want one (a long event stream). */
export const stream = (response: WireResponse): Stream.Stream<Uint8Array, TransportClosed> =>
  Stream.repeatEffectOption(
    Effect.flatMap(Effect.mapError(response.next, Option.some), (chunk) => (chunk === undefined ? Effect.fail(Option.none()) : Effect.succeed(chunk)))
  )

/**
 * A wire with its own kept-alive connections, closed with the scope. `socketPath` sends every
 * request over that unix socket instead of the URL's host (the CLI's socket to the daemon).
 * Undici (~1 MB of code) is loaded by the first wire made, not by a process that never makes one.
 */
export const make = (options: { readonly socketPath?: string } = {}): Effect.Effect<Wire, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.map(
        Effect.promise(() => import("undici")),
        ({ Agent }) =>
          new Agent({
            // A call's deadline is the caller's (the Pool's), and a notification stream may rightly
            // be quiet for hours: undici's own 5-minute waits for headers and for body would cut both.
            headersTimeout: 0,
            bodyTimeout: 0,
            ...(options.socketPath === undefined ? {} : { connect: { socketPath: options.socketPath } })
          })
      ),
      (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
    ),
    (agent): Wire => {
      const inFlight = new Members<Exchange>()
      // A wire sends to a few URLs (a server's endpoint, its SSE endpoint), each on every call:
      // each is parsed once. Bounded for a wire given many.
      const targets = new Map<string, Target>()
      const target = (url: string): Target => {
        let found = targets.get(url)
        if (found === undefined) {
          if (targets.size >= 64) targets.clear()
          const parsed = new URL(url)
          found = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` }
          targets.set(url, found)
        }
        return found
      }
      const open = (req: WireRequest, reader: BodyReader): Exchange => {
        let where: Target | Error
        try {
          where = target(req.url)
        } catch (e) {
          where = e instanceof Error ? e : new Error(String(e))
        }
        const exchange = new Exchange(
          req.url,
          where instanceof Error
            ? { origin: "", path: "", method: req.method }
            : { origin: where.origin, path: where.path, method: req.method, headers: req.headers, body: req.body ?? null },
          agent,
          reader
        )
        if (where instanceof Error) {
          exchange.abort(unreachable(req.url, where))
          return exchange
        }
        exchange.onLeave(inFlight.add(exchange))
        const inPlace = req.inPlace
        if (inPlace !== undefined) {
          exchange.onLeave(inPlace.waitingOn(() => {
            exchange.cut = true
            exchange.abort()
          }))
        }
        exchange.dispatch()
        return exchange
      }
      return {
        abortInFlight: Effect.sync(() => {
          for (const exchange of inFlight.values()) exchange.abort()
        }),
        dispatch: open,
        send: (req) =>
          Effect.flatMap(
            Effect.async<WireResponse & WireExchange, TransportClosed>((resume) => {
              const exchange = open(req, {
                begin: (response) => {
                  resume(Effect.succeed(response))
                  return false
                },
                chunk: () => undefined,
                // Before its start an exchange fails only as TransportClosed.
                end: (failure) => resume(Effect.fail(failure?._tag === "TransportClosed" ? failure : unreachable(req.url, failure)))
              })
              return Effect.sync(() => exchange.abandon())
            }),
            (response) =>
              // A body not read to its end when the scope closes is abandoned: the request is aborted
              // (the connection goes with it) rather than left for the server to finish. Added to the
              // scope as it is: `Effect.addFinalizer` would diff the fiber's FiberRefs twice per
              // exchange to restore them around a finalizer that reads none.
              Effect.as(
                Effect.scopeWith((scope) => Scope.addFinalizer(scope, Effect.sync(() => response.release()))),
                response
              )
          )
      }
    }
  )
