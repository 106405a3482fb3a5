/**
 * Which protocol version mcpx-fx offers and accepts, per era.
 *
 * Client side (the Prober): what to put in the first `server/discover` `_meta` or `initialize`, how
 * to react to `-32022` (retry with the newest mutual version, each version once and one refused
 * version re-sent once, or switch era), and which version a session carries once the server has
 * answered. Server side (the host-facing server): what to answer a host's `initialize`, and
 * whether a modern request's version is one we serve.
 *
 * Everything here is pure apart from the per-negotiation memory of tried versions, which lives in a
 * `Ref` so one probe can hand the same `Negotiation` to the discover and the initialize fibers it
 * runs side by side.
 */
import * as Revision from "@mcpx-fx/protocol/Revision"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"

type Era = Revision.Era
type AnyRevision = Revision.Revision

/** The revision type of one era: `RevisionOf<"legacy">` is a `LegacyRevision`. */
export type RevisionOf<E extends Era> = E extends "legacy" ? Revision.LegacyRevision : Revision.ModernRevision

/**
 * The versions mcpx-fx can produce, per era, newest first. Only versions whose shapes mcpx-fx can
 * actually write belong here: advertising a version we cannot speak is worse than not offering it.
 */
export interface SupportedVersions {
  readonly legacy: Arr.NonEmptyReadonlyArray<Revision.LegacyRevision>
  readonly modern: Arr.NonEmptyReadonlyArray<Revision.ModernRevision>
}

const newestFirst = <A extends string>(list: Arr.NonEmptyReadonlyArray<A>): Arr.NonEmptyReadonlyArray<A> =>
  Arr.reverse(Arr.sort(Arr.dedupe(list), Revision.compare))

/** Everything `@mcpx-fx/protocol/Revision` knows, newest first. */
export const DefaultSupportedVersions: SupportedVersions = {
  legacy: newestFirst(Revision.LegacyRevisions),
  modern: newestFirst(Revision.ModernRevisions)
}

const listOf = (versions: ReadonlyArray<string>): string => versions.length === 0 ? "(none)" : versions.join(", ")

/**
 * The server and mcpx-fx have no protocol version in common. Raised for a `-32022` whose
 * `supported` list shares nothing with ours, and for a `DiscoverResult` with no mutual modern
 * version. A Schema error because it ends a server start and is reported to users, over `/v1`
 * and from the daemon to `mcpx-fx serve`.
 */
export class DisjointVersionsError extends Schema.TaggedError<DisjointVersionsError>()("DisjointVersionsError", {
  /** Every version mcpx-fx could have used here, newest first. */
  ours: Schema.Array(Schema.String),
  /** The server's list, as it sent it. */
  theirs: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `no protocol version in common with the server: mcpx-fx supports ${listOf(this.ours)}; ` +
      `the server supports ${listOf(this.theirs)}`
  }
}

/**
 * The server refused every mutual version we could still offer: it answered `-32022` for a version
 * it lists itself. Each version is tried once, and one refusal per negotiation may be answered by
 * re-sending the version it refused (see `onUnsupportedVersion`), so a confused server cannot keep
 * us looping. Ends a server start, hence a Schema error.
 */
export class VersionsExhaustedError extends Schema.TaggedError<VersionsExhaustedError>()("VersionsExhaustedError", {
  /** Versions already sent in this negotiation, in the order they were sent. */
  tried: Schema.Array(Schema.String),
  /** The server's latest `supported` list (empty when it sent none). */
  theirs: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `the server refused protocol version ${listOf(this.tried)} and offers nothing else mcpx-fx ` +
      `has not tried (the server supports ${listOf(this.theirs)}; each version is tried once, and re-sent at most once)`
  }
}

/**
 * A server answered `initialize` with a version mcpx-fx cannot speak (the specification lets it
 * answer another version; the client must then disconnect). Ends a server start, hence a Schema
 * error.
 */
export class UnacceptableVersionError extends Schema.TaggedError<UnacceptableVersionError>()("UnacceptableVersionError", {
  /** The version mcpx-fx sent in `initialize`. */
  offered: Schema.String,
  /** The version the server answered, as text (`JSON.stringify` of it when it was not a string). */
  answered: Schema.String,
  /** The legacy versions mcpx-fx accepts, newest first. */
  ours: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `the server answered initialize ${this.offered} with protocol version ${this.answered}, ` +
      `which mcpx-fx does not support (it accepts ${listOf(this.ours)})`
  }
}

/**
 * A host sent a modern request in a version mcpx-fx does not serve. The host-facing server turns it
 * into `-32022` with `data: {supported, requested}` (and HTTP 400); it is a Schema error because
 * that is exactly what crosses the wire.
 */
export class UnsupportedRequestedVersionError extends Schema.TaggedError<UnsupportedRequestedVersionError>()("UnsupportedRequestedVersionError", {
  /** The version the host asked for, as text (empty when it sent none). */
  requested: Schema.String,
  /** Every version mcpx-fx serves, newest first, legacy ones included so dual-era hosts can fall back. */
  supported: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `unsupported protocol version ${this.requested === "" ? "(none)" : this.requested}; ` +
      `mcpx-fx supports ${listOf(this.supported)}`
  }
}

/** Every way a negotiation can end without a version. */
export type NegotiationError = DisjointVersionsError | VersionsExhaustedError | UnacceptableVersionError

/**
 * What to do after the server refused a version.
 *
 * - `Retry`: send the same kind of request again (discover again, or initialize again) with `version`.
 * - `SwitchEra`: the conversation cannot go on in this era; send the other era's opening request
 *   (initialize after a modern refusal, discover after a legacy one) with `version`. `reason` says
 *   whether the server's list held only the other era's versions or held no usable list at all.
 *   Whether a switch is allowed (not under `force-*`) is the Prober's decision, not ours.
 */
export type NegotiationStep = Data.TaggedEnum<{
  Retry: { readonly era: Era; readonly version: AnyRevision }
  SwitchEra: { readonly era: Era; readonly version: AnyRevision; readonly reason: "other-era-only" | "no-supported-list" }
}>
/** Constructors and matchers for `NegotiationStep`. */
export const NegotiationStep = Data.taggedEnum<NegotiationStep>()

/**
 * One negotiation with one upstream: from the first offer to the version the session carries.
 * Every version this hands out is remembered as tried, so none is sent twice.
 */
export interface Negotiation {
  /**
   * The version to send now in `era`'s opening request (discover `_meta` or `initialize`): the
   * newest one at first, the one chosen by the last step for that era afterwards.
   */
  readonly offer: <E extends Era>(era: E) => Effect.Effect<RevisionOf<E>>
  /**
   * The server refused the version of an `era` request with `-32022` (or an `initialize` error
   * carrying `data.supported`); `data` is the JSON-RPC error's `data`. When its list names no
   * mutual version we have not tried but does name the one it just refused, that version is
   * re-sent, once per negotiation: the specification has the client retry with a version from the
   * list, a refusal that contradicts the list is most often a passing one (a server restarting or
   * mid-upgrade behind a balancer), and once bounds a server that is simply confused.
   */
  readonly onUnsupportedVersion: (
    era: Era,
    data: unknown
  ) => Effect.Effect<NegotiationStep, DisjointVersionsError | VersionsExhaustedError>
  /**
   * The server answered `initialize` with `answered`. The answer, not our offer, is what every later
   * request carries, so it becomes the negotiated version when we support it.
   */
  readonly acceptInitialize: (answered: unknown) => Effect.Effect<Revision.LegacyRevision, UnacceptableVersionError>
  /** The server answered `server/discover`; the newest mutual modern version becomes the negotiated one. */
  readonly acceptDiscover: (
    supportedVersions: ReadonlyArray<string>
  ) => Effect.Effect<Revision.ModernRevision, DisjointVersionsError>
  /** Versions sent so far, in order. */
  readonly tried: Effect.Effect<ReadonlyArray<AnyRevision>>
  /** The version the session carries, once one has been accepted. */
  readonly negotiated: Effect.Effect<Option.Option<AnyRevision>>
}

// `requested` is deliberately not decoded: servers send "" or omit it, and it changes nothing.
const UnsupportedVersionData = Schema.Struct({ supported: Schema.Array(Schema.String) })
const decodeUnsupportedVersionData = Schema.decodeUnknownOption(UnsupportedVersionData)

interface State {
  readonly tried: ReadonlyArray<AnyRevision>
  readonly next: { readonly legacy: Revision.LegacyRevision; readonly modern: Revision.ModernRevision }
  readonly negotiated: Option.Option<AnyRevision>
  /** Whether this negotiation already re-sent a refused version its server lists. */
  readonly resent: boolean
}

const otherEra = (era: Era): Era => (era === "legacy" ? "modern" : "legacy")

const markTried = (state: State, version: AnyRevision): State => state.tried.includes(version) ? state : { ...state, tried: [...state.tried, version] }

const withNext = (state: State, version: AnyRevision): State =>
  Revision.isModernRevision(version)
    ? { ...state, next: { ...state.next, modern: version } }
    : { ...state, next: { ...state.next, legacy: version } }

/**
 * Builds the Negotiator for a set of supported versions (sorted newest first whatever order they
 * come in).
 */
export const make = (versions: SupportedVersions = DefaultSupportedVersions): Context.Tag.Service<Negotiator> => {
  const legacy = newestFirst(versions.legacy)
  const modern = newestFirst(versions.modern)
  const newestLegacy = Arr.headNonEmpty(legacy)
  const newestModern = Arr.headNonEmpty(modern)
  const supported: SupportedVersions = { legacy, modern }
  const listFor = (era: Era): ReadonlyArray<AnyRevision> => (era === "legacy" ? legacy : modern)
  const all: ReadonlyArray<AnyRevision> = [...modern, ...legacy]

  const firstOffer = <E extends Era>(era: E): RevisionOf<E> => (era === "legacy" ? newestLegacy : newestModern) as RevisionOf<E>

  const newestMutual = (theirs: ReadonlyArray<string>, era?: Era): Option.Option<AnyRevision> =>
    Option.fromNullable((era === undefined ? all : listFor(era)).find((v) => theirs.includes(v)))

  const refused = (
    state: State,
    era: Era,
    data: unknown
  ): Either.Either<readonly [NegotiationStep, State], DisjointVersionsError | VersionsExhaustedError> => {
    const decoded = decodeUnsupportedVersionData(data)
    const step = (build: (version: AnyRevision) => NegotiationStep, version: AnyRevision) =>
      Either.right([build(version), markTried(withNext(state, version), version)] as const)
    if (Option.isNone(decoded)) {
      // No list to choose from: the TS SDK reads this as "not really modern" (digest §2.5); the
      // symmetric reading after an initialize refusal is "try discover". Still one try per version.
      const other = otherEra(era)
      const untried = listFor(other).find((v) => !state.tried.includes(v))
      return untried === undefined
        ? Either.left(new VersionsExhaustedError({ tried: state.tried, theirs: [] }))
        : step((version) => NegotiationStep.SwitchEra({ era: other, version, reason: "no-supported-list" }), untried)
    }
    const theirs = decoded.value.supported
    const sameEra = listFor(era).filter((v) => theirs.includes(v))
    if (sameEra.length > 0) {
      const untried = sameEra.find((v) => !state.tried.includes(v))
      if (untried !== undefined) return step((version) => NegotiationStep.Retry({ era, version }), untried)
      // `next[era]` is what the refused request carried; every mutual version is tried, so it is one.
      const refusedVersion = state.next[era]
      return !state.resent && theirs.includes(refusedVersion)
        ? Either.right([NegotiationStep.Retry({ era, version: refusedVersion }), { ...state, resent: true }] as const)
        : Either.left(new VersionsExhaustedError({ tried: state.tried, theirs }))
    }
    const other = otherEra(era)
    const otherEraMutual = listFor(other).filter((v) => theirs.includes(v))
    if (otherEraMutual.length > 0) {
      // A -32022 listing only legacy versions means "use initialize" (digest §2.5), and a refused
      // initialize listing only modern ones means "use discover" (versioning.mdx:154-157).
      const untried = otherEraMutual.find((v) => !state.tried.includes(v))
      return untried === undefined
        ? Either.left(new VersionsExhaustedError({ tried: state.tried, theirs }))
        : step((version) => NegotiationStep.SwitchEra({ era: other, version, reason: "other-era-only" }), untried)
    }
    return Either.left(new DisjointVersionsError({ ours: all, theirs }))
  }

  const begin = Effect.gen(function*() {
    const state = yield* Ref.make<State>({
      tried: [],
      next: { legacy: newestLegacy, modern: newestModern },
      negotiated: Option.none(),
      resent: false
    })
    const offer = <E extends Era>(era: E): Effect.Effect<RevisionOf<E>> =>
      Ref.modify(state, (s) => {
        const version = s.next[era] as RevisionOf<E>
        return [version, markTried(s, version)] as const
      })
    const onUnsupportedVersion = Effect.fn("Negotiator.onUnsupportedVersion")(function*(era: Era, data: unknown) {
      const outcome = yield* Ref.modify(
        state,
        (s): readonly [Either.Either<NegotiationStep, DisjointVersionsError | VersionsExhaustedError>, State] =>
          Either.match(refused(s, era, data), {
            onLeft: (error) => [Either.left(error), s],
            onRight: ([next, updated]) => [Either.right(next), updated]
          })
      )
      const next = yield* outcome
      yield* Effect.logDebug("protocol version refused").pipe(
        Effect.annotateLogs({ era, next: next.version, step: next._tag })
      )
      return next
    })
    const acceptInitialize = Effect.fn("Negotiator.acceptInitialize")(function*(answered: unknown) {
      if (Revision.isLegacyRevision(answered) && legacy.includes(answered)) {
        yield* Ref.update(state, (s) => ({ ...s, negotiated: Option.some(answered) }))
        return answered
      }
      const offered = (yield* Ref.get(state)).next.legacy
      return yield* new UnacceptableVersionError({
        offered,
        answered: typeof answered === "string" ? answered : String(JSON.stringify(answered)),
        ours: legacy
      })
    })
    const acceptDiscover = Effect.fn("Negotiator.acceptDiscover")(function*(supportedVersions: ReadonlyArray<string>) {
      const mutual = modern.find((v) => supportedVersions.includes(v))
      if (mutual === undefined) return yield* new DisjointVersionsError({ ours: modern, theirs: supportedVersions })
      yield* Ref.update(state, (s) => ({ ...s, negotiated: Option.some(mutual) }))
      return mutual
    })
    return {
      offer,
      onUnsupportedVersion,
      acceptInitialize,
      acceptDiscover,
      tried: Effect.map(Ref.get(state), (s) => s.tried),
      negotiated: Effect.map(Ref.get(state), (s) => s.negotiated)
    } satisfies Negotiation
  })

  const answerInitialize = (requested: unknown): Revision.LegacyRevision =>
    Revision.isLegacyRevision(requested) && legacy.includes(requested) ? requested : newestLegacy

  const acceptModernRequest = (requested: unknown) =>
    Revision.isModernRevision(requested) && modern.includes(requested)
      ? Effect.succeed(requested)
      : Effect.fail(
        new UnsupportedRequestedVersionError({
          requested: typeof requested === "string" ? requested : "",
          supported: all
        })
      )

  return Negotiator.of({
    supported,
    firstOffer,
    newestMutual,
    begin,
    answerInitialize,
    acceptModernRequest
  })
}

/**
 * The protocol-version policy of mcpx-fx, for both its client side (the Prober) and its server
 * side (the host-facing server's `initialize` and modern version checks).
 */
export class Negotiator extends Context.Tag("@mcpx-fx/upstream/Negotiator")<Negotiator, {
  /** The versions mcpx-fx can produce, per era, newest first. */
  readonly supported: SupportedVersions
  /** What to open with: the newest modern version for discover/`_meta`, the newest legacy one for `initialize`. */
  readonly firstOffer: <E extends Era>(era: E) => RevisionOf<E>
  /** The newest version in both our list (one era's, or both) and `theirs`; unknown entries never match. */
  readonly newestMutual: (theirs: ReadonlyArray<string>, era?: Era) => Option.Option<AnyRevision>
  /** Starts a negotiation with one upstream; it remembers which versions were tried. */
  readonly begin: Effect.Effect<Negotiation>
  /** Server side: the version to answer a host's `initialize` with (its own if we speak it, else our newest legacy). */
  readonly answerInitialize: (requested: unknown) => Revision.LegacyRevision
  /** Server side: the modern version a host's request carries, or the error that becomes `-32022`. */
  readonly acceptModernRequest: (
    requested: unknown
  ) => Effect.Effect<Revision.ModernRevision, UnsupportedRequestedVersionError>
}>() {
  /** Every revision `@mcpx-fx/protocol` knows. */
  static readonly layer: Layer.Layer<Negotiator> = Layer.sync(Negotiator, () => make())
  /** A narrower (or reordered) set of versions, e.g. to pin an old revision in tests. */
  static readonly layerVersions = (versions: SupportedVersions): Layer.Layer<Negotiator> => Layer.sync(Negotiator, () => make(versions))
}
