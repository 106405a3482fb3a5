/**
 * The fleet over NATS request-reply: each process answers on
 * `<fleet.name>.instance.<process id>.<kind>`, and a message to a process is one NATS request.
 *
 * Why NATS and not @effect/cluster: the live upstream call behind a pending question or a task is
 * pinned to the process holding its stdio child or open stream. Cluster entities are placed by
 * shard hashing and moved on rebalance, which such a call cannot follow; we need to address one
 * known process, and to learn at once when it is gone. NATS answers "no responders" immediately
 * for a subject nobody listens on (a dead process's subscriptions go with its connection), and
 * carries a message without writing anything to storage.
 */
import { type JsonObject, JsonObject as JsonObjectSchema } from "@mcpx-fx/protocol/Json"
import { Fleet, FleetError, type FleetService, InstanceGone, KindPattern, MaxPayloadBytes, ProcessIdPattern } from "@mcpx-fx/server/Fleet"
import { connect, type NatsConnection, RequestError, TimeoutError } from "@nats-io/transport-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

export interface NatsFleetOptions {
  /** The NATS server URL(s), e.g. `nats://127.0.0.1:4222`. */
  readonly servers: string
  /** The fleet's name: the subject prefix, so two fleets on one NATS never mix. */
  readonly name: string
  /** This process's id (Fleet.processIdOf). */
  readonly instance: string
  /** The most bytes a message may carry either way (default `MaxPayloadBytes`; never over the server's). */
  readonly maxPayloadBytes?: number
}

/** What comes back: the handler's reply, or why there is none. */
const Reply = Schema.parseJson(Schema.Union(
  Schema.Struct({ ok: JsonObjectSchema }),
  Schema.Struct({ failed: Schema.String })
))
const Request = Schema.parseJson(JsonObjectSchema)
const decodeReply = Schema.decodeUnknownEither(Reply)
const decodeRequest = Schema.decodeUnknownEither(Request)

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

export const subjectOf = (name: string, instance: string, kind: string) => `${name}.instance.${instance}.${kind}`

/** The text of a message, or why it is refused unread. */
const textOf = (data: Uint8Array, limit: number): Either.Either<string, string> => {
  if (data.length > limit) return Either.left(`message of ${data.length} bytes is over the ${limit}-byte limit`)
  try {
    return Either.right(decoder.decode(data))
  } catch {
    return Either.left("message is not UTF-8")
  }
}

const replyBytes = (reply: { readonly ok: JsonObject } | { readonly failed: string }, limit: number): Uint8Array => {
  const bytes = encoder.encode(JSON.stringify(reply))
  return bytes.length > limit ? encoder.encode(JSON.stringify({ failed: "the reply is over the size limit" })) : bytes
}

/** The service over an open connection. */
export const make = (nc: NatsConnection, options: NatsFleetOptions): FleetService => {
  // The server refuses what is over its own max_payload; past ours, we refuse first and say why.
  const limit = () => Math.min(options.maxPayloadBytes ?? MaxPayloadBytes, nc.info?.max_payload ?? MaxPayloadBytes)
  const send: FleetService["send"] = (to, kind, payload, timeout) =>
    Effect.gen(function*() {
      const fail = (detail: string) => new FleetError({ instance: to, kind, detail })
      if (!ProcessIdPattern.test(to)) return yield* new InstanceGone({ instance: to, detail: "no mcpx-fx process has such an id" })
      const bytes = encoder.encode(JSON.stringify(payload))
      if (bytes.length > limit()) return yield* fail(`the message is over the ${limit()}-byte limit`)
      const millis = Math.max(1, Math.round(Duration.toMillis(Duration.decode(timeout))))
      const msg = yield* Effect.tryPromise({
        try: () => nc.request(subjectOf(options.name, to, kind), bytes, { timeout: millis }),
        catch: (e): InstanceGone | FleetError => {
          if (e instanceof RequestError && e.isNoResponders()) {
            return new InstanceGone({ instance: to, detail: "no process of that id is connected to the fleet" })
          }
          if (e instanceof TimeoutError || (e instanceof RequestError && e.cause instanceof TimeoutError)) {
            return fail(`no reply within ${millis} ms`)
          }
          return fail(e instanceof Error ? e.message : String(e))
        }
      })
      const text = textOf(msg.data, limit())
      if (Either.isLeft(text)) return yield* fail(`reply refused: ${text.left}`)
      const reply = decodeReply(text.right)
      if (Either.isLeft(reply)) return yield* fail("reply is not a fleet reply")
      return "ok" in reply.right ? reply.right.ok : yield* fail(reply.right.failed)
    })

  const serve: FleetService["serve"] = (kind, handler) =>
    Effect.gen(function*() {
      if (!KindPattern.test(kind)) return yield* Effect.dieMessage(`not a fleet message kind: ${kind}`)
      const run = yield* FiberSet.makeRuntime<never>()
      const sub = yield* Effect.acquireRelease(
        Effect.sync(() =>
          nc.subscribe(subjectOf(options.name, options.instance, kind), {
            callback: (err, msg) => {
              if (err !== null || msg.reply === undefined || msg.reply === "") return
              const respond = (reply: { readonly ok: JsonObject } | { readonly failed: string }) => {
                // The connection may be closing under us; the sender then learns it from its timeout.
                try {
                  msg.respond(replyBytes(reply, limit()))
                } catch {
                  // nothing to tell
                }
              }
              const text = textOf(msg.data, limit())
              if (Either.isLeft(text)) return respond({ failed: text.left })
              const payload = decodeRequest(text.right)
              if (Either.isLeft(payload)) return respond({ failed: "the message is not a JSON object" })
              run(
                handler(payload.right).pipe(
                  Effect.matchCause({
                    onSuccess: (ok) => respond({ ok }),
                    onFailure: () => respond({ failed: `the instance could not answer ${kind}` })
                  })
                )
              )
            }
          })
        ),
        (s) => Effect.sync(() => s.unsubscribe())
      )
      // The subscription is in place once the server has it, so a message sent next is not lost.
      yield* Effect.promise(() => nc.flush())
      return sub
    }).pipe(Effect.asVoid)

  return { instance: options.instance, send, serve }
}

/** Connects to NATS for the scope's life; closing drains what is in flight, then disconnects. */
export const layer = (options: NatsFleetOptions): Layer.Layer<Fleet, FleetError> =>
  Layer.scoped(
    Fleet,
    Effect.map(
      Effect.acquireRelease(
        Effect.tryPromise({
          try: () => connect({ servers: options.servers, name: options.instance, maxReconnectAttempts: -1 }),
          catch: (e) =>
            new FleetError({
              instance: options.instance,
              kind: "connect",
              detail: `cannot connect to NATS at ${options.servers} (fleet.nats): ${e instanceof Error ? e.message : String(e)}`
            })
        }),
        (nc) => Effect.promise(() => nc.drain().catch(() => nc.close()))
      ),
      (nc) => make(nc, options)
    )
  )
