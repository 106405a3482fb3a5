/**
 * The HTTP exchanges of the Streamable HTTP transport, on node:http with kept-alive connections.
 *
 * The transport sends one POST per message, so what an exchange costs is paid on every call. A
 * general HttpClient (request and response objects, middleware, a Stream per body, a span per
 * request) cost several times the whole rest of a call through mcpx-fx, and closed its connection
 * after each answer; this does only what the transport needs: a request out, the status and
 * headers in, and the body read whole under a cap or as a stream of bytes for server-sent events.
 *
 * An exchange is tied to a scope: closing it before the body was read aborts the request (and its
 * connection), which is how a closed POST tells a modern server that its request was abandoned.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import * as Https from "node:https"
import { urlToHttpOptions } from "node:url"
import { Members } from "@mcpx-fx/cancel/InFlight"
import type { WaitingCall } from "./internal/InPlace.js"
import { FrameTooLarge, TransportClosed } from "./Transport.js"

/** One request: headers by lower-case name. */
export interface WireRequest {
  readonly method: "GET" | "POST" | "DELETE"
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  /**
   * The call running in place (internal/InPlace.ts) this exchange is the wait of: a cut aborts the
   * exchange, so whatever it waits on (its answer, its body) ends at once.
   */
  readonly inPlace?: WaitingCall
}

/** What came back: status and headers (lower-case names) at once, the body when asked for. */
export interface WireResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The whole body as text; FrameTooLarge past `maxBytes`, without buffering what is over. */
  readonly text: (maxBytes: number) => Effect.Effect<string, FrameTooLarge | TransportClosed>
  /** The body's next chunk as it arrives (an event stream), `undefined` at its end; read with backpressure. */
  readonly next: Effect.Effect<Uint8Array | undefined, TransportClosed>
}

/** Sends requests; each response lives as long as the scope it was sent in. */
export interface Wire {
  readonly send: (request: WireRequest) => Effect.Effect<WireResponse, TransportClosed, Scope.Scope>
  /** Aborts every exchange in flight (their connection is closing); the wire stays usable. */
  readonly abortInFlight: Effect.Effect<void>
}

/** Header records as one with lower-case names, later ones winning, as HTTP reads them. */
export const mergeHeaders = (...records: ReadonlyArray<Readonly<Record<string, string>> | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const record of records) {
    if (record === undefined) continue
    for (const name in record) out[name.toLowerCase()] = record[name]!
  }
  return out
}

/** The cause chain of a failure as one line ("connect ECONNREFUSED 127.0.0.1:1"). */
export const describeCause = (cause: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      if (current.message.length > 0 && !parts.includes(current.message)) parts.push(current.message)
      current = current.cause
    } else {
      parts.push(String(current))
      break
    }
  }
  return parts.length > 0 ? parts.join(": ") : "unknown error"
}

const unreachable = (url: string, cause: unknown) => new TransportClosed({ reason: `cannot reach ${url}: ${describeCause(cause)}` })
const broken = (url: string, cause: unknown) => new TransportClosed({ reason: `connection to ${url} broke: ${describeCause(cause)}` })

/** A reset by the peer, as Node reports it on a request ("socket hang up" is ECONNRESET too). */
const isReset = (e: unknown): boolean => (e as NodeJS.ErrnoException | undefined)?.code === "ECONNRESET"

const headersOf = (message: Http.IncomingMessage): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(message.headers)) out[name] = Array.isArray(value) ? value.join(", ") : value
  return out
}

/** The whole body of `response`, capped. */
const readText = (url: string, request: Http.ClientRequest, response: Http.IncomingMessage, maxBytes: number) =>
  Effect.async<string, FrameTooLarge | TransportClosed>((resume) => {
    const declared = Number(response.headers["content-length"] ?? Number.NaN)
    if (Number.isFinite(declared) && declared > maxBytes) {
      request.destroy()
      return resume(Effect.fail(new FrameTooLarge({ limit: maxBytes })))
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const finish = (outcome: Effect.Effect<string, FrameTooLarge | TransportClosed>) => {
      if (done) return
      done = true
      response.off("data", onData)
      resume(outcome)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        request.destroy()
        return finish(Effect.fail(new FrameTooLarge({ limit: maxBytes })))
      }
      chunks.push(chunk)
    }
    response.on("data", onData)
    response.once("end", () => finish(Effect.succeed(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"))))
    response.once("error", (e) => finish(Effect.fail(broken(url, e))))
    response.once("close", () => {
      if (!response.complete) finish(Effect.fail(broken(url, new Error("the body ended early"))))
    })
    return Effect.sync(() => {
      done = true
      request.destroy()
    })
  })

/**
 * The body of `response` as it arrives, pulled one chunk at a time: the response is paused while
 * a chunk waits to be taken, so a fast server cannot fill memory ahead of a slow reader. `undefined`
 * is the body's end. Nothing listens to the body until the first pull (a body read with `text`
 * never pays for this).
 */
const chunkReader = (url: string, response: Http.IncomingMessage): Effect.Effect<Uint8Array | undefined, TransportClosed> => {
  let listening = false
  const chunks: Array<Buffer> = []
  // undefined while the body runs; null once it ended whole; the failure once it broke.
  let end: TransportClosed | null | undefined
  let waiter: ((next: Effect.Effect<Uint8Array | undefined, TransportClosed>) => void) | undefined
  const take = (): Effect.Effect<Uint8Array | undefined, TransportClosed> => {
    const chunk = chunks.shift()
    if (chunk !== undefined) {
      if (chunks.length === 0 && end === undefined) response.resume()
      return Effect.succeed(chunk)
    }
    return end === null || end === undefined ? Effect.succeed(undefined) : Effect.fail(end)
  }
  const wake = () => {
    const resume = waiter
    waiter = undefined
    if (resume !== undefined) resume(take())
  }
  const ended = (outcome: TransportClosed | null) => {
    if (end === undefined) end = outcome
    wake()
  }
  const listen = () => {
    listening = true
    response.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
      response.pause()
      wake()
    })
    response.once("end", () => ended(null))
    response.once("error", (e) => ended(broken(url, e)))
    response.once("close", () => {
      if (!response.complete) ended(broken(url, new Error("the body ended early")))
    })
  }
  return Effect.async((resume) => {
    if (!listening) listen()
    if (chunks.length > 0 || end !== undefined) return resume(take())
    waiter = resume
    return Effect.sync(() => {
      waiter = undefined
    })
  })
}

/** The chunks of a response's body as a Stream, for the readers that want one (a long event stream). */
export const stream = (response: WireResponse): Stream.Stream<Uint8Array, TransportClosed> =>
  Stream.repeatEffectOption(
    Effect.flatMap(Effect.mapError(response.next, Option.some), (chunk) => (chunk === undefined ? Effect.fail(Option.none()) : Effect.succeed(chunk)))
  )

/**
 * A wire with its own kept-alive connections, closed with the scope. `socketPath` sends every
 * request over that unix socket instead of the URL's host (the CLI's socket to the daemon).
 */
export const make = (options: { readonly socketPath?: string } = {}): Effect.Effect<Wire, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => ({ http: new Http.Agent({ keepAlive: true }), https: new Https.Agent({ keepAlive: true }) })),
      (agents) =>
        Effect.sync(() => {
          agents.http.destroy()
          agents.https.destroy()
        })
    ),
    (agents): Wire => {
      const inFlight = new Members<Http.ClientRequest>()
      // A wire sends to a few URLs (a server's endpoint, its SSE endpoint), each on every call:
      // each is parsed once, not by node:http per request. Bounded for a wire given many.
      const targets = new Map<string, Http.RequestOptions>()
      const target = (url: string): Http.RequestOptions => {
        let options = targets.get(url)
        if (options === undefined) {
          if (targets.size >= 64) targets.clear()
          options = urlToHttpOptions(new URL(url))
          targets.set(url, options)
        }
        return options
      }
      return {
        abortInFlight: Effect.sync(() => {
          for (const request of inFlight.values()) request.destroy()
        }),
        send: (req) => {
          type Sent = { readonly request: Http.ClientRequest; readonly response: Http.IncomingMessage }
          const inPlace = req.inPlace
          let cut = false
          let letGo: (() => void) | undefined
          const open = (retried: boolean): Effect.Effect<Sent, TransportClosed> =>
            Effect.async<Sent, TransportClosed>((resume) => {
              let request: Http.ClientRequest
              try {
                const secure = req.url.startsWith("https:")
                const headers: Record<string, string | number> = { ...req.headers }
                if (req.body !== undefined) headers["content-length"] = Buffer.byteLength(req.body)
                request = (secure ? Https : Http).request({
                  ...target(req.url),
                  method: req.method,
                  headers,
                  agent: secure ? agents.https : agents.http,
                  ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath })
                })
              } catch (e) {
                return resume(Effect.fail(unreachable(req.url, e)))
              }
              request.once("close", inFlight.add(request))
              let settled = false
              request.once("response", (response) => {
                settled = true
                resume(Effect.succeed({ request, response }))
              })
              request.on("error", (e) => {
                if (settled) return
                settled = true
                // A kept-alive connection the server closed while idle fails the next request
                // sent on it before the server read a byte of it; that one is sent again, once,
                // on a fresh connection (not one a cut aborted).
                if (!cut && !retried && request.reusedSocket && isReset(e)) return resume(open(true))
                letGo?.()
                resume(Effect.fail(unreachable(req.url, e)))
              })
              request.end(req.body)
              if (inPlace !== undefined) {
                letGo = inPlace.waitingOn(() => {
                  cut = true
                  request.destroy()
                })
              }
              return Effect.sync(() => request.destroy())
            })
          return Effect.flatMap(
            open(false),
            ({ request, response }) =>
              // A body not read to its end when the scope closes is abandoned: the request is aborted
              // (the connection goes with it) rather than left for the server to finish. Added to the
              // scope as it is: `Effect.addFinalizer` would diff the fiber's FiberRefs twice per
              // exchange to restore them around a finalizer that reads none.
              Effect.as(
                Effect.scopeWith((scope) =>
                  Scope.addFinalizer(
                    scope,
                    Effect.sync(() => {
                      letGo?.()
                      if (!response.complete) request.destroy()
                    })
                  )
                ),
                {
                  status: response.statusCode ?? 0,
                  headers: headersOf(response),
                  text: (maxBytes: number) => readText(req.url, request, response, maxBytes),
                  next: chunkReader(req.url, response)
                }
              )
          )
        }
      }
    }
  )
