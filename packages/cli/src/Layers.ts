/**
 * Where the gateway's configuration layers are put together. The gateway never reads
 * `process.env`, the working directory or the home directory itself; Main.ts reads them once into
 * `ProcessEnvironment`, and the layers here hand them to Config, Settings and StateDir as inputs,
 * so tests and the daemon can give other ones.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Config from "@mcpx-fx/config/Config"
import * as ConfigFile from "@mcpx-fx/config/ConfigFile"
import * as ConfigWatcher from "@mcpx-fx/daemon/ConfigWatcher"
import * as FleetPending from "@mcpx-fx/gateway/FleetPending"
import * as Gateway from "@mcpx-fx/gateway/Gateway"
import * as GatewayModel from "@mcpx-fx/gateway/GatewayModel"
import { GatewayConfigError } from "@mcpx-fx/gateway/GatewayModel"
import * as PendingCalls from "@mcpx-fx/gateway/PendingCalls"
import * as Settings from "@mcpx-fx/config/Settings"
import * as SettingsModel from "@mcpx-fx/config/SettingsModel"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as StateDir from "@mcpx-fx/config/StateDir"
import * as ToolCatalog from "@mcpx-fx/gateway/ToolCatalog"
import * as EraCache from "@mcpx-fx/upstream/era/EraCache"
import * as Negotiator from "@mcpx-fx/upstream/era/Negotiator"
import * as Pool from "@mcpx-fx/upstream/pool/Pool"
import * as PoolModel from "@mcpx-fx/upstream/pool/PoolModel"
import * as ProcessGroups from "@mcpx-fx/upstream/os/ProcessGroups"
import * as Prober from "@mcpx-fx/upstream/era/Prober"
import * as Fleet from "@mcpx-fx/server/Fleet"
import * as HostTasks from "@mcpx-fx/server/HostTasks"
import * as TaskPolicy from "@mcpx-fx/server/TaskPolicy"
import * as RequestState from "@mcpx-fx/server/RequestState"
import * as TaskStore from "@mcpx-fx/server/TaskStore"
import * as TokenStore from "@mcpx-fx/upstream/auth/TokenStore"
import * as TransportLayer from "@mcpx-fx/upstream/transport/TransportLayer"
import * as UpstreamAuth from "@mcpx-fx/upstream/auth/UpstreamAuth"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import * as Logging from "./Logging.js"
import type { Globals } from "./GlobalOptions.js"

/** The invoking process's environment variables, working directory and home directory. */
export class ProcessEnvironment extends Context.Tag("mcpx-fx/ProcessEnvironment")<
  ProcessEnvironment,
  ConfigFile.Environment
>() {
  /** The given environment, as read by Main.ts from `process`. */
  static readonly layer = (environment: ConfigFile.Environment): Layer.Layer<ProcessEnvironment> => Layer.succeed(ProcessEnvironment, environment)
}

/** The inputs of config discovery for this invocation. */
export const configInput = (environment: ConfigFile.Environment, globals: Globals): ConfigFile.ConfigInput => ({
  ...environment,
  configFlag: Option.getOrUndefined(globals.config)
})

/** The loaded configuration, the settings resolved over it, and the state directory. */
export type Configured = Config.Config | Settings.Settings | StateDir.StateDir

/** What building `Configured` can fail with: both are configuration errors, exit 2. */
export type ConfiguredError = ConfigFile.ConfigError | SettingsModel.SettingsError

/** The warnings of a loaded configuration (unknown keys, skipped servers), on stderr. */
export const printWarnings = (config: Config.LoadedConfig): Effect.Effect<void> =>
  Effect.forEach(config.warnings ?? [], (w) => Console.error(`mcpx-fx: warning: ${w.message}`), { discard: true })

/**
 * The configuration for one invocation: files found from its working directory (or named by
 * `--config`/`MCPX_CONFIG`), settings resolved default < file < env < flag, and its state directory.
 * Its warnings are printed on stderr once it is loaded.
 */
export const configured = (
  globals: Globals
): Layer.Layer<Configured, ConfiguredError, ProcessEnvironment | FileSystem.FileSystem | Path.Path | Logging.LogFormatSwitch> =>
  Layer.unwrapEffect(
    Effect.map(ProcessEnvironment, (environment) =>
      Layer.mergeAll(
        Config.layerSettings({ env: environment.env, flags: globals.flags }),
        StateDir.StateDir.layer(environment)
      ).pipe(
        Layer.provideMerge(
          Config.Config.layer(configInput(environment, globals)).pipe(
            Layer.tap((context) => printWarnings(Context.get(context, Config.Config)))
          )
        ),
        // The config's `log.format` applies from here on (unless the flag or variable fixed it).
        Layer.tap((context) => Logging.settle(Context.get(context, Settings.Settings)))
      ))
  )

/**
 * Says on stderr that no config file was found and where mcpx-fx looked, for the commands that
 * run the gateway: with no servers they would otherwise answer an empty list without a word.
 */
export const noticeNoConfig = (config: Config.LoadedConfig): Effect.Effect<void> =>
  config.files.length > 0
    ? Effect.void
    : Console.error(
      `mcpx-fx: no config file found (looked for ${Config.describeSearch(config.searched ?? [])}); ` +
        "no servers are configured. Add one with `mcpx-fx servers add <name> <command-or-url>`, or name a file with --config."
    )

/**
 * Checks the setting flags and `MCPX_*` variables without reading any config file, for commands
 * that must work while a file is broken (`config --path`): a bad flag value is still refused.
 */
export const checkFlags = (globals: Globals): Effect.Effect<void, SettingsModel.SettingsError, ProcessEnvironment> =>
  Effect.flatMap(ProcessEnvironment, (environment) => Effect.asVoid(Settings.resolveAll({ env: environment.env, flags: globals.flags })))

/** The OAuth token store of this invocation's state directory, shared with every other process using it. */
export const tokenStore: Layer.Layer<TokenStore.TokenStore, never, StateDir.StateDir | FileSystem.FileSystem | Path.Path> = Layer
  .unwrapEffect(Effect.map(StateDir.StateDir, (stateDir) => TokenStore.TokenStore.layerFile(stateDir.path)))

/**
 * OAuth for HTTP upstreams on the state directory's token store. Without an authorizer (the
 * daemon, `serve`, `call`), a server that needs a login fails its calls with the `auth login` hint;
 * `mcpx-fx auth login` gives its own.
 */
export const upstreamAuth = (
  options: UpstreamAuth.UpstreamAuthOptions = {}
): Layer.Layer<UpstreamAuth.UpstreamAuth, never, StateDir.StateDir | FileSystem.FileSystem | Path.Path> =>
  UpstreamAuth.UpstreamAuth.layer(options).pipe(Layer.provide(tokenStore))

/** `configured`, and the notice on stderr when no config file was found. */
export const configuredAndNoticed = (globals: Globals) => Layer.tap(configured(globals), (context) => noticeNoConfig(Context.get(context, Config.Config)))

/** How `gateway` and `watched` are built. */
export interface GatewayOptions {
  readonly oneShot?: boolean
  /**
   * Whether the process is exiting, so a stdio server that outlives its stdin is handed to a
   * reaper instead of waited for (StdioOptions.handOff); a one-shot command always is.
   */
  readonly exiting?: () => boolean
  readonly recordProcessGroups?: boolean
  /**
   * The configuration to build on, when the caller has already loaded it and said that no file was
   * found (else `configuredAndNoticed(globals)`).
   */
  readonly configured?: Layer.Layer<Configured, ConfiguredError, ProcessEnvironment | FileSystem.FileSystem | Path.Path | Logging.LogFormatSwitch>
  /**
   * Whether this process joins the fleet `fleet.nats` names (the daemon). Other commands run
   * alone whatever the settings say: a one-shot `call` has nothing to offer the fleet.
   */
  readonly fleet?: boolean
}

/**
 * The gateway for one in-process invocation, with everything under it: the pool, the prober, the
 * era cache in the state directory (unless `upstream.eraCache` is off), the tool catalog with its
 * schema cache there, the transports on node:child_process and the platform's HTTP client, OAuth for HTTP
 * upstreams with the state directory's tokens. `oneShot`: the command ends after one answer and
 * reports upstream failures itself (PoolModel.OneShot). `recordProcessGroups` (the daemon, which owns
 * its state directory): the stdio upstreams' process groups are recorded there, so the next daemon
 * can stop what a crashed one left behind (`ProcessGroups.reapLeftovers`); otherwise nothing is
 * recorded.
 */
const always = () => true

export const gateway = (
  globals: Globals,
  options: GatewayOptions = {}
): Layer.Layer<
  | Gateway.Gateway
  | Pool.Pool
  | PendingCalls.PendingCalls
  | UpstreamAuth.UpstreamAuth
  | Configured
  | ProcessGroups.ProcessGroups
  | Fleet.Fleet,
  ConfiguredError | GatewayModel.GatewayConfigError,
  ProcessEnvironment | FileSystem.FileSystem | Path.Path | Logging.LogFormatSwitch
> => {
  const eraCache = Layer.unwrapEffect(
    Effect.gen(function*() {
      const stateDir = yield* StateDir.StateDir
      const enabled = yield* Settings.get("upstream.eraCache")
      return EraCache.EraCache.layer.pipe(Layer.provide(EraCache.EraCacheConfig.layer({ stateDir: stateDir.path, enabled })))
    })
  )
  const groups = options.recordProcessGroups === true
    ? Layer.unwrapEffect(Effect.map(StateDir.StateDir, (stateDir) => ProcessGroups.ProcessGroups.layerFile(stateDir.path)))
    : ProcessGroups.ProcessGroups.layerNone
  const upstream = Pool.Pool.layer.pipe(
    Layer.provideMerge(Prober.Prober.layer),
    Layer.provideMerge(eraCache),
    Layer.provide(Negotiator.Negotiator.layer),
    // A stdio server inherits mcpx-fx's environment, but never the daemon's own secrets.
    // A one-shot command hands a server that outlives its stdin to a reaper rather than wait for it.
    Layer.provide(Layer.unwrapEffect(Effect.map(Settings.get("upstream.stdinBuffer"), (maxStdinBytes) =>
      TransportLayer.layer({
        stdio: {
          withheldEnv: SettingsRegistry.secretEnvNames,
          maxStdinBytes,
          ...(options.oneShot === true ? { handOff: always } : options.exiting !== undefined ? { handOff: options.exiting } : {})
        }
      })))),
    Layer.provideMerge(upstreamAuth()),
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(options.oneShot === true ? Layer.succeed(PoolModel.OneShot, true) : Layer.empty),
    // The transport records process groups in the ProcessGroups it finds in its context.
    Layer.provideMerge(groups)
  )
  const noticed = options.configured ?? configuredAndNoticed(globals)
  return Gateway.Gateway.layer.pipe(
    Layer.provideMerge(upstream),
    Layer.provideMerge(options.fleet === true ? pendingCalls : alonePendingCalls),
    Layer.provide(ToolCatalog.ToolCatalog.layer),
    Layer.provideMerge(options.fleet === true ? fleet : alone),
    Layer.provideMerge(noticed)
  )
}

/**
 * This process in its fleet: with `fleet.nats` set, connected to the other instances over NATS
 * (loaded only then: a lone daemon pays nothing for the client), else alone. Either way its id is
 * `<fleet.instance>-<random hex>`, so a daemon restarted under the same name answers for none of
 * its predecessor's calls and tasks.
 */
export const fleet: Layer.Layer<Fleet.Fleet, GatewayModel.GatewayConfigError, Settings.Settings> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const nats = yield* Settings.get("fleet.nats")
    const instance = yield* processId
    if (nats === "") return Fleet.Fleet.singleWith(instance)
    const secret = yield* Settings.get("fleet.secret")
    if (secret.length < 32) {
      return Layer.fail(
        new GatewayConfigError({
          detail: "fleet.nats is set, so fleet.secret (MCPX_FLEET_SECRET, --fleet-secret) must be the secret the fleet's " +
            "instances share, of at least 32 characters: without it no instance can open another's requestState"
        })
      )
    }
    if (!/^postgres(ql)?:/.test(yield* Settings.get("tasks.store"))) {
      yield* Console.error("mcpx-fx: warning: fleet.nats is set but tasks.store is not PostgreSQL, so tasks are not shared with the other instances")
    }
    const name = yield* Settings.get("fleet.name")
    const NatsFleet = yield* Effect.promise(() => import("@mcpx-fx/fleet/NatsFleet"))
    return NatsFleet.layer({ servers: nats, name: name === "" ? "mcpx" : name, instance }).pipe(
      Layer.mapError((e) => new GatewayConfigError({ detail: e.message }))
    )
  })
)

/** `<fleet.instance>-<random hex>`, fresh for each process. */
const processId = Effect.map(Settings.get("fleet.instance"), (named) => Fleet.processIdOf(named === "" ? Fleet.defaultInstanceName() : named))

/** This process in no fleet, whatever the settings say. */
const alone: Layer.Layer<Fleet.Fleet, never, Settings.Settings> = Layer.unwrapEffect(Effect.map(processId, Fleet.Fleet.singleWith))

/** The lone registry, its handles naming this process. */
const alonePendingCalls: Layer.Layer<PendingCalls.PendingCalls, never, Settings.Settings | Fleet.Fleet> = Layer.unwrapEffect(
  Effect.map(Fleet.Fleet, (f) => PendingCalls.PendingCalls.layerAs(f.instance))
)

/** Pending calls: across the fleet when there is one, else exactly the lone registry. */
const pendingCalls: Layer.Layer<PendingCalls.PendingCalls, never, Settings.Settings | Fleet.Fleet> = Layer.unwrapEffect(
  Effect.map(Fleet.Fleet, (f) => (f.alone === true ? alonePendingCalls : FleetPending.layer))
)

/**
 * What the legacy `Mcp-Session-Id`s this daemon mints begin with: `<fleet.instance>.` in a fleet,
 * so the load balancer can send a session's requests back to the instance holding it; else none.
 */
export const sessionIdPrefix: Effect.Effect<string | undefined, never, Settings.Settings> = Effect.gen(function*() {
  if ((yield* Settings.get("fleet.nats")) === "") return undefined
  const named = yield* Settings.get("fleet.instance")
  return `${named === "" ? Fleet.defaultInstanceName() : named}.`
})

/**
 * The host-facing `requestState` of this process: keyed from `fleet.secret` when set (so every
 * instance of a fleet opens the others' states), else a fresh key; and a lifetime of
 * `questions.ttl`, so a state lasts exactly as long as the pending call it names.
 */
export const requestState: Layer.Layer<RequestState.RequestState, never, Settings.Settings> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const ttl = yield* Settings.get("questions.ttl")
    const secret = yield* Settings.get("fleet.secret")
    return RequestState.RequestState.layerWithKey(secret === "" ? randomBytes(32) : RequestState.keyFromSecret(secret), { ttl })
  })
)

/**
 * Host tasks, kept where `tasks.store` says: the embedded SQLite file `<state>/tasks.db` (no
 * server needed), or PostgreSQL. Built once per process: every listener's Server shares it, so a
 * task made over one is found over another. The store's rows name the Fleet's process id, and in a
 * fleet an update or cancel of a task another instance runs goes to that instance; `serve` gives
 * it `alone` (hostTasksAlone), so it keeps tasks alone.
 */
export const hostTasks: Layer.Layer<
  HostTasks.HostTasks | TaskStore.TaskStore,
  TaskStore.TaskStoreError,
  Settings.Settings | StateDir.StateDir | Fleet.Fleet
> = Layer
  .unwrapEffect(
    Effect.gen(function*() {
      const url = yield* Settings.get("tasks.store")
      const millis = (d: Duration.Duration) => Math.round(Duration.toMillis(d))
      const policy: TaskPolicy.TaskPolicy = {
        ...TaskPolicy.DefaultPolicy,
        afterMs: millis(yield* Settings.get("tasks.after")),
        ttlMs: millis(yield* Settings.get("tasks.ttl")),
        pollIntervalMs: millis(yield* Settings.get("tasks.pollInterval")),
        perCaller: yield* Settings.get("tasks.perCaller"),
        total: yield* Settings.get("tasks.total")
      }
      // Loaded when a command serves hosts: the SQL clients (and the native SQLite addon) cost
      // every other command ~10 ms of start for nothing.
      const SqlTaskStore = yield* Effect.promise(() => import("@mcpx-fx/store/SqlTaskStore"))
      const fleet = yield* Fleet.Fleet
      const instance = fleet.instance
      const store = url === ""
        ? SqlTaskStore.layerSqlite(
          join(
            yield* Effect.flatMap(
              StateDir.StateDir,
              (dir) => Effect.mapError(dir.ensure, (e) => new TaskStore.TaskStoreError({ operation: "open the embedded task store", reason: e.message }))
            ),
            "tasks.db"
          ),
          instance
        )
        : SqlTaskStore.layerPostgres(url, instance)
      const tasks = fleet.alone !== true
        ? HostTasks.HostTasks.layerFleet(policy).pipe(Layer.provide(Layer.succeed(Fleet.Fleet, fleet)))
        : HostTasks.HostTasks.layer(policy)
      // The store stays in the built context: the daemon's /metrics reads its active count.
      return tasks.pipe(Layer.provideMerge(store))
    })
  )

/** `hostTasks` for a process in no fleet (`serve`), whatever the settings say. */
export const hostTasksAlone: Layer.Layer<HostTasks.HostTasks | TaskStore.TaskStore, TaskStore.TaskStoreError, Settings.Settings | StateDir.StateDir> = hostTasks
  .pipe(Layer.provide(alone))

/**
 * The gateway plus the ConfigWatcher that reloads its configuration: watching the files for a
 * long-running process (the daemon, `serve`), or reloading only when asked.
 */
export const watched = (globals: Globals, watch: boolean, options: Omit<GatewayOptions, "oneShot"> = {}) =>
  Layer.unwrapEffect(
    Effect.map(ProcessEnvironment, (environment) => ConfigWatcher.ConfigWatcher.layer(configInput(environment, globals), { watch }))
  ).pipe(Layer.provideMerge(gateway(globals, options)))
