/**
 * A test's end of an HTTP fixture, on global fetch. Replies are read whole (JSON or SSE) by
 * `send`; `stream` keeps an SSE response open and hands out its events one at a time, so a test
 * can answer a server→client request that arrives mid-stream. SSE is parsed by eventsource-parser.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { classify, type Message } from "../Wire.js"
import { PeerError } from "./StdioPeer.js"

export interface HttpReply {
  readonly status: number
  readonly headers: Headers
  readonly contentType: string
  readonly body: string
  /** The JSON-RPC messages in the body: one JSON object, or the SSE `message` events. */
  readonly messages: ReadonlyArray<Message>
  readonly events: ReadonlyArray<EventSourceMessage>
}

export interface Init {
  readonly method?: "GET" | "POST" | "DELETE" | "PUT"
  readonly headers?: Record<string, string>
  readonly body?: unknown
}

const toMessage = (data: string): ReadonlyArray<Message> => {
  try {
    const d = classify(JSON.parse(data))
    return d._tag === "invalid" ? [] : [d.message]
  } catch {
    return []
  }
}

const request = (url: string, init: Init, signal?: AbortSignal) =>
  Effect.tryPromise({
    try: () =>
      fetch(url, {
        method: init.method ?? "POST",
        headers: {
          accept: "application/json, text/event-stream",
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
          ...init.headers
        },
        ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
        ...(signal === undefined ? {} : { signal })
      }),
    catch: (e) => new PeerError({ reason: `fetch ${url} failed: ${String(e)}` })
  })

/** One HTTP exchange, read to the end. */
export const send = (url: string, init: Init = {}): Effect.Effect<HttpReply, PeerError> =>
  Effect.gen(function*() {
    const res = yield* request(url, init)
    const body = yield* Effect.tryPromise({
      try: () => res.text(),
      catch: (e) => new PeerError({ reason: `reading ${url} failed: ${String(e)}` })
    })
    const contentType = res.headers.get("content-type") ?? ""
    const events: Array<EventSourceMessage> = []
    if (contentType.startsWith("text/event-stream")) createParser({ onEvent: (e) => events.push(e) }).feed(body)
    const messages = contentType.startsWith("application/json")
      ? toMessage(body)
      : events.filter((e) => e.event === undefined || e.event === "message").flatMap((e) => toMessage(e.data))
    return { status: res.status, headers: res.headers, contentType, body, messages, events }
  })

export const post = (url: string, body: unknown, headers: Record<string, string> = {}) => send(url, { method: "POST", headers, body })

export interface EventStream {
  readonly status: number
  readonly headers: Headers
  /** The next event, or undefined once the server ended the stream. */
  readonly next: Effect.Effect<EventSourceMessage | undefined, PeerError>
  /** The next event's JSON-RPC message; fails if the stream ends first. */
  readonly nextMessage: Effect.Effect<Message, PeerError>
}

/** An exchange whose SSE reply stays open; closing the scope aborts it (which a modern server reads as cancellation). */
export const stream = (url: string, init: Init = {}): Effect.Effect<EventStream, PeerError, Scope.Scope> =>
  Effect.gen(function*() {
    const abort = yield* Effect.acquireRelease(
      Effect.sync(() => new AbortController()),
      (c) => Effect.sync(() => c.abort())
    )
    const res = yield* request(url, init, abort.signal)
    const reader = res.body?.getReader()
    const decoder = new TextDecoder()
    const queue: Array<EventSourceMessage> = []
    const parser = createParser({ onEvent: (e) => queue.push(e) })
    let ended = false
    const next: Effect.Effect<EventSourceMessage | undefined, PeerError> = Effect.suspend(() => {
      const ready = queue.shift()
      if (ready !== undefined || ended || reader === undefined) return Effect.succeed(ready)
      return Effect.tryPromise({
        try: () => reader.read(),
        catch: (e) => new PeerError({ reason: `reading the stream failed: ${String(e)}` })
      }).pipe(
        Effect.flatMap((chunk) => {
          if (chunk.done) ended = true
          else parser.feed(decoder.decode(chunk.value, { stream: true }))
          return next
        })
      )
    })
    const nextMessage = next.pipe(
      Effect.flatMap((e) => {
        const m = e === undefined ? undefined : toMessage(e.data)[0]
        return m === undefined
          ? Effect.fail(new PeerError({ reason: `expected a JSON-RPC event, got ${e === undefined ? "the end" : e.data}` }))
          : Effect.succeed(m)
      })
    )
    return { status: res.status, headers: res.headers, next, nextMessage }
  })

/** Waits until a child's stderr has carried `text` (fixtures log cancellations there). */
export const stderrIncludes = (child: { readonly stderr: NodeJS.ReadableStream | null }, text: string) =>
  Effect.async<void>((resume) => {
    let seen = ""
    const onData = (d: Buffer | string) => {
      seen = (seen + d.toString()).slice(-(text.length + 4096))
      if (seen.includes(text)) {
        child.stderr?.off("data", onData)
        resume(Effect.void)
      }
    }
    child.stderr?.on("data", onData)
    return Effect.sync(() => void child.stderr?.off("data", onData))
  })
