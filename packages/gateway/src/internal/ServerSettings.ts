/**
 * Each configured server as the Gateway runs it: its pool, probe and call settings, built from the
 * configuration and the settings.
 *
 * Hot settings are read per call (`current`), so a runtime change (PUT /v1/settings) reaches the
 * next call; the Pool gives a server whose preference or pool settings changed a fresh pool and
 * lets the old instances finish. pool.max and pool.scope are cold: read once, when the Gateway is
 * made.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { ConfiguredServer, LoadedConfig } from "@mcpx-fx/config/Config"
import type { Settings } from "@mcpx-fx/config/Settings"
import { ClientInfo, DefaultClientCapabilities, GatewayConfigError, type GatewayServer } from "../GatewayModel.js"
import type { PendingCallsService } from "../PendingQuestions.js"
import { perGeneration } from "./PerGeneration.js"

/** The servers over `settings`; stdio questions nobody can be said to have caused go to `unattributed`. */
export const make = (settings: Settings["Type"], unattributed: PendingCallsService["hold"]) =>
  Effect.gen(function*() {
    const prefix = yield* settings.get("names.prefix")
    // Without prefixes, two servers' names could collide.
    const checkPrefix = (loaded: LoadedConfig): Effect.Effect<void, GatewayConfigError> =>
      !prefix && loaded.servers.length > 1
        ? Effect.fail(
          new GatewayConfigError({
            detail: `names.prefix=false needs exactly one server, but ${loaded.servers.length} are configured ` +
              `(${loaded.servers.map((s) => s.name).join(", ")}); their names could collide`
          })
        )
        : Effect.void
    const hotSettings = Effect.all({
      upstreamProtocol: settings.get("upstream.protocol"),
      probeTimeout: settings.get("upstream.probeTimeout"),
      idleTimeout: settings.get("pool.idleTimeout"),
      callTimeout: settings.get("pool.callTimeout"),
      startTimeout: settings.get("pool.startTimeout")
    })
    type HotSettings = Effect.Effect.Success<typeof hotSettings>
    const cold = {
      max: yield* settings.get("pool.max"),
      scope: yield* settings.get("pool.scope")
    }
    // A stdio question that cannot be attributed to one caller is held for whoever answers it by id.
    // A call is parked on its caller once its round is put to it, `questions.gather` after its question.
    const sessionOptions = {
      clientInfo: ClientInfo,
      clientCapabilities: DefaultClientCapabilities,
      unattributed,
      askedTogether: settings.get("questions.gather")
    }

    const build = (configured: ConfiguredServer, hot: HotSettings): GatewayServer => {
      const preference = configured.definition.protocol ?? hot.upstreamProtocol
      const p = configured.pool
      return {
        name: configured.name,
        namespace: configured.namespace,
        prefixed: prefix,
        configured,
        preference,
        callTimeout: Duration.decode(p.callTimeout ?? hot.callTimeout),
        scope: p.scope ?? cold.scope,
        catalog: { name: configured.name, definition: configured.definition },
        pool: {
          definition: configured.definition,
          probe: { preference, probeTimeout: hot.probeTimeout, session: sessionOptions },
          settings: {
            max: p.max ?? cold.max,
            idleTimeout: p.idleTimeout ?? hot.idleTimeout,
            startTimeout: p.startTimeout ?? hot.startTimeout
          }
        }
      }
    }

    // Built again only when a hot setting changed, so a call finds the same PoolServer as the last
    // one and the Pool knows it without working out its fingerprint again.
    const built = new Map<ConfiguredServer, { readonly hot: HotSettings; readonly server: GatewayServer }>()
    const sameHot = (a: HotSettings, b: HotSettings): boolean =>
      a.upstreamProtocol === b.upstreamProtocol && a.probeTimeout === b.probeTimeout && a.idleTimeout === b.idleTimeout &&
      a.callTimeout === b.callTimeout && a.startTimeout === b.startTimeout

    const hot = perGeneration(settings.generation, hotSettings)

    const builtFor = (server: GatewayServer, now: HotSettings): GatewayServer => {
      const last = built.get(server.configured)
      if (last !== undefined && sameHot(last.hot, now)) return last.server
      const next = build(server.configured, now)
      built.set(server.configured, { hot: now, server: next })
      return next
    }

    /** The server as the settings stand now. */
    const current = (server: GatewayServer): Effect.Effect<GatewayServer> => Effect.map(hot.get, (now) => builtFor(server, now))

    /**
     * The same, without an effect, while the settings read for it are still kept (nearly every
     * call: they are read again only after a runtime change or a reload, when this is undefined).
     */
    const currentKnown = (server: GatewayServer): GatewayServer | undefined => {
      const now = hot.known()
      return now === undefined ? undefined : builtFor(server, now)
    }

    return { checkPrefix, hotSettings, build, current, currentKnown }
  })
