/**
 * mcpx-fx's own MRTR `requestState`: what an `input_required` result hands the host, and what the
 * host's retry must bring back.
 *
 * The host treats the state as opaque, but mcpx-fx must treat what comes back as attacker-controlled
 * (the retry is routed and answered on its word), so the state is HMAC-signed and expires. It is
 * bound to the request it answers — the method and a digest of the params that identify the request
 * — and never to a connection or a session: a modern host may retry over any connection, and a
 * stateless server keeps nothing between rounds. The upstream's own state rides inside, untouched.
 *
 * Token: `base64url(JSON payload) "." base64url(HMAC-SHA256(key, first part))`.
 */
import type { JsonObject } from "@mcpx-fx/protocol/Json"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto"

/** The payload format; a token of another version is refused rather than guessed at. */
export const Version = 1

/** How long a host may take to answer before its retry is refused. */
export const DefaultTtl: Duration.Duration = Duration.minutes(10)

/**
 * The params a retry adds to the original request (MRTR) or that describe the hop rather than the
 * request; everything else must be the same for the retry to be the same request.
 */
export const UnboundParams: ReadonlyArray<string> = ["_meta", "inputResponses", "requestState"]

/** Why a returned state was refused. */
export const InvalidRequestStateReason = Schema.Literal("malformed", "tampered", "expired", "other-method", "other-params")
export type InvalidRequestStateReason = typeof InvalidRequestStateReason.Type

/**
 * A retry's `requestState` cannot be trusted. The Server answers it -32602 (Invalid params): the
 * specification only says a state that fails its integrity check MUST be rejected (mrtr.mdx,
 * "Server obligations"), and the conformance suite expects -32602 for a tampered one.
 */
export class InvalidRequestState extends Schema.TaggedError<InvalidRequestState>("@mcpx-fx/server/InvalidRequestState")(
  "InvalidRequestState",
  { reason: InvalidRequestStateReason, detail: Schema.String }
) {
  override get message(): string {
    return `requestState ${this.detail}`
  }
}

/** The request a state is minted for, or that a retry claims to repeat. */
export interface RequestIdentity {
  readonly method: string
  /** The request's params as sent; `UnboundParams` are left out of the digest. */
  readonly params: JsonObject | undefined
}

/** What to seal besides the request's identity. */
export interface Sealing extends RequestIdentity {
  /** The upstream's own `requestState`, opaque; absent when the upstream gave none. */
  readonly inner?: string
  /** Routing the answering side needs beyond what the params name (e.g. the namespace that answered). */
  readonly target?: string
}

/** A state that passed every check. */
export interface Opened {
  readonly inner?: string
  readonly target?: string
  /** Epoch milliseconds after which the state is refused. */
  readonly expiresAt: number
}

const Payload = Schema.Struct({
  v: Schema.Number,
  exp: Schema.Number,
  method: Schema.String,
  digest: Schema.String,
  inner: Schema.optionalWith(Schema.String, { exact: true }),
  target: Schema.optionalWith(Schema.String, { exact: true })
})
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(Payload))

/** JSON with object keys sorted at every depth, so equal params give equal digests. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map((v: unknown) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`
  if (value !== null && typeof value === "object") {
    const members = Object.keys(value)
      .sort()
      .flatMap((k) => {
        const member = (value as Record<string, unknown>)[k]
        return member === undefined ? [] : [`${JSON.stringify(k)}:${canonicalJson(member)}`]
      })
    return `{${members.join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** SHA-256 of the canonical params that identify a request. */
export const paramsDigest = (params: JsonObject | undefined): string => {
  const bound: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(params ?? {})) if (!UnboundParams.includes(k)) bound[k] = v
  return createHash("sha256").update(canonicalJson(bound)).digest("base64url")
}

/** Options of a RequestState. */
export interface RequestStateOptions {
  /** The HMAC key; at least 32 random bytes. */
  readonly key: Uint8Array
  readonly ttl?: Duration.DurationInput
}

/** Seals and opens mcpx-fx's MRTR `requestState`. */
export class RequestState extends Context.Tag("@mcpx-fx/server/RequestState")<RequestState, {
  /** A signed state for an `input_required` answer to `request`, expiring after the TTL. */
  readonly seal: (request: Sealing) => Effect.Effect<string>
  /** Checks a retry's state against the request the retry makes; the sealed contents if it holds. */
  readonly open: (token: string, request: RequestIdentity) => Effect.Effect<Opened, InvalidRequestState>
}>() {
  /** A fresh random key per process: states do not outlive it, which a host survives by asking again. */
  static readonly layer: Layer.Layer<RequestState> = Layer.effect(RequestState, Effect.suspend(() => fresh))

  /** A fixed key (tests, or several processes that must accept each other's states). */
  static readonly layerWithKey = (key: Uint8Array, options: { readonly ttl?: Duration.DurationInput } = {}): Layer.Layer<RequestState> =>
    Layer.succeed(RequestState, make({ key, ...options }))
}

/**
 * The key every instance of a fleet derives from its shared secret (`fleet.secret`), so a state one
 * instance seals opens on any other. HKDF keeps the secret itself out of the HMAC and lets the
 * same secret key other things apart.
 */
export const keyFromSecret = (secret: string): Uint8Array => new Uint8Array(hkdfSync("sha256", Buffer.from(secret, "utf8"), "mcpx-fx", "requestState v1", 32))

/** A RequestState over a fresh random 32-byte key. */
export const fresh: Effect.Effect<Context.Tag.Service<RequestState>> = Effect.sync(() => make({ key: randomBytes(32) }))

/** A RequestState over the given key. */
export const make = (options: RequestStateOptions): Context.Tag.Service<RequestState> => {
  const key = Buffer.from(options.key)
  const ttlMs = Duration.toMillis(options.ttl ?? DefaultTtl)
  const mac = (body: string) => createHmac("sha256", key).update(body).digest("base64url")
  const refuse = (reason: InvalidRequestStateReason, detail: string) => new InvalidRequestState({ reason, detail })

  const seal = (request: Sealing): Effect.Effect<string> =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const payload: typeof Payload.Type = {
        v: Version,
        exp: now + ttlMs,
        method: request.method,
        digest: paramsDigest(request.params),
        ...(request.inner === undefined ? {} : { inner: request.inner }),
        ...(request.target === undefined ? {} : { target: request.target })
      }
      const body = Buffer.from(JSON.stringify(payload)).toString("base64url")
      return `${body}.${mac(body)}`
    })

  const open = (token: string, request: RequestIdentity): Effect.Effect<Opened, InvalidRequestState> =>
    Effect.gen(function*() {
      const dot = token.indexOf(".")
      if (dot <= 0 || dot !== token.lastIndexOf(".")) {
        return yield* refuse("malformed", "is not one mcpx-fx issued")
      }
      const body = token.slice(0, dot)
      // The encoded signatures are compared (decoding would forgive altered padding bits), in
      // constant time, so a signature cannot be found byte by byte.
      const given = Buffer.from(token.slice(dot + 1))
      const expected = Buffer.from(mac(body))
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return yield* refuse("tampered", "failed its signature check (altered, or issued by another mcpx-fx process)")
      }
      const decoded = decodePayload(Buffer.from(body, "base64url").toString("utf8"))
      if (Either.isLeft(decoded) || decoded.right.v !== Version) {
        return yield* refuse("malformed", "is of a format this mcpx-fx does not read")
      }
      const payload = decoded.right
      const now = yield* Clock.currentTimeMillis
      if (now >= payload.exp) {
        return yield* refuse("expired", `expired ${Duration.format(Duration.millis(now - payload.exp))} ago; send the request again without it`)
      }
      if (payload.method !== request.method) {
        return yield* refuse("other-method", `was issued for ${payload.method}, not ${request.method}`)
      }
      if (payload.digest !== paramsDigest(request.params)) {
        return yield* refuse("other-params", `was issued for a request with other params; a retry must repeat the original params`)
      }
      return {
        expiresAt: payload.exp,
        ...(payload.inner === undefined ? {} : { inner: payload.inner }),
        ...(payload.target === undefined ? {} : { target: payload.target })
      }
    })

  return RequestState.of({ seal, open })
}
