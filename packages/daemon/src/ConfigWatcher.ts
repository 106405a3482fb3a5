/**
 * Config changes without a restart: the daemon watches the config files it loaded and reloads
 * when one changes (or on `reload`, which SIGHUP calls). A reload reads the whole configuration
 * again, as a start would, and hands it to the Gateway, which keeps unchanged servers' processes,
 * stops removed and restarts redefined ones once their calls finish, and tells hosts the lists
 * changed; settings in the files follow (hot ones at once, cold ones after a restart).
 *
 * A configuration that does not read or validate changes nothing: the running one stays, and the
 * error goes to the log, to `/v1/events` (`config.error`) and to `mcpx-fx status`.
 *
 * Directories are watched, not files: editors save by writing a new file and renaming it over the
 * old one, which a watch on the old file would never see. Bursts of events (a save is often
 * several) are gathered for `debounce` before one reload.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Config, load, type LoadedConfig } from "@mcpx-fx/config/Config"
import { type ConfigInput, ProjectFileNames } from "@mcpx-fx/config/ConfigFile"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import { Settings } from "@mcpx-fx/config/Settings"

/** A reload that took effect: what changed. */
export const ConfigReloadEvent = Schema.Struct({
  type: Schema.Literal("config.reload"),
  at: Schema.Number,
  files: Schema.Array(Schema.String),
  added: Schema.Array(Schema.String),
  removed: Schema.Array(Schema.String),
  restarted: Schema.Array(Schema.String),
  refiltered: Schema.Array(Schema.String),
  /** Cold settings whose new file value waits for a restart. */
  restartRequired: Schema.Array(Schema.String),
  warnings: Schema.Array(Schema.String)
})

/** A reload refused: the running configuration stays. */
export const ConfigErrorEvent = Schema.Struct({
  type: Schema.Literal("config.error"),
  at: Schema.Number,
  message: Schema.String
})

/** What `/v1/events` says about the configuration. */
export const ConfigEvent = Schema.Union(ConfigReloadEvent, ConfigErrorEvent)
export type ConfigEvent = typeof ConfigEvent.Type

/** The configuration's state, for `/v1/status`. */
export const ConfigState = Schema.Struct({
  files: Schema.Array(Schema.String),
  /** When the running configuration was read, epoch milliseconds. */
  loadedAt: Schema.Number,
  /** How many reloads took effect. */
  reloads: Schema.Number,
  /** Whether the files are watched (the daemon), or only reloaded on request. */
  watching: Schema.Boolean,
  /** Servers a file disabled (`"disabled": true`), and the file that did. */
  disabled: Schema.Array(Schema.Struct({ name: Schema.String, file: Schema.String })),
  /** The last refused reload, until one succeeds. */
  error: Schema.optionalWith(Schema.Struct({ message: Schema.String, at: Schema.Number }), { exact: true })
})
export type ConfigState = typeof ConfigState.Type

/** What one reload did. */
export type ReloadOutcome =
  | typeof ConfigReloadEvent.Type
  | typeof ConfigErrorEvent.Type

/** How the watcher runs. */
export interface WatchOptions {
  /** Watch the files (the daemon); false only reloads on request. */
  readonly watch: boolean
  /** How long a burst of file events is gathered before one reload. */
  readonly debounce?: Duration.DurationInput
}

/** The config watcher. */
export class ConfigWatcher extends Context.Tag("@mcpx-fx/daemon/ConfigWatcher")<ConfigWatcher, {
  /** Reads the configuration again now and applies it, or reports why not. */
  readonly reload: Effect.Effect<ReloadOutcome>
  /** The configuration's state; none where no configuration is watched or reloaded (`none`). */
  readonly state: Effect.Effect<Option.Option<ConfigState>>
  /** Config events from now on (in place once this returns). */
  readonly subscribe: Effect.Effect<Queue.Dequeue<ConfigEvent>, never, Scope.Scope>
}>() {
  /** Reloads the configuration `input` names, watching its files when `options.watch`. */
  static readonly layer = (
    input: ConfigInput,
    options: WatchOptions
  ): Layer.Layer<ConfigWatcher, never, Config | Gateway | Settings | FileSystem.FileSystem | Path.Path> => Layer.scoped(ConfigWatcher, make(input, options))

  /**
   * No watcher: the configuration stays as it was loaded (the API run in tests, embedders). It has
   * no state to show (`/v1/status` leaves `config` out), sends no events, and refuses a reload.
   */
  static readonly none: Layer.Layer<ConfigWatcher> = Layer.effect(
    ConfigWatcher,
    Effect.map(PubSub.sliding<ConfigEvent>(1), (silent) =>
      ConfigWatcher.of({
        reload: Effect.map(Clock.currentTimeMillis, (at) => ({ type: "config.error" as const, at, message: "this process reloads no configuration" })),
        state: Effect.succeedNone,
        subscribe: PubSub.subscribe(silent)
      }))
  )
}

const make = (input: ConfigInput, options: WatchOptions) =>
  Effect.gen(function*() {
    const initial = yield* Config
    const gateway = yield* Gateway
    const settings = yield* Settings
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const events = yield* PubSub.sliding<ConfigEvent>(256)
    const lock = yield* Effect.makeSemaphore(1)
    const environment = { FileSystem: fs, Path: path }

    let current: LoadedConfig = initial
    let state: ConfigState = {
      files: initial.files,
      loadedAt: yield* Clock.currentTimeMillis,
      reloads: 0,
      watching: options.watch,
      disabled: initial.disabled
    }

    const refuse = (message: string) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        state = { ...state, error: { message, at } }
        yield* Effect.logError(`config reload refused, the running configuration stays: ${message}`)
        const event = { type: "config.error" as const, at, message }
        yield* PubSub.publish(events, event)
        return event
      })

    const apply = (next: LoadedConfig) =>
      Effect.gen(function*() {
        const diff = yield* gateway.reconfigure(next)
        const replaced = yield* settings.replaceFiles(next.settingsFiles)
        const at = yield* Clock.currentTimeMillis
        current = next
        state = { files: next.files, loadedAt: at, reloads: state.reloads + 1, watching: options.watch, disabled: next.disabled }
        const warnings = (next.warnings ?? []).map((w) => w.message)
        for (const w of warnings) yield* Effect.logWarning(w)
        if (replaced.restartRequired.length > 0) {
          yield* Effect.logWarning(`config reload: ${replaced.restartRequired.join(", ")} changed and take effect after a restart`)
        }
        const event = {
          type: "config.reload" as const,
          at,
          files: next.files,
          added: diff.added,
          removed: diff.removed,
          restarted: diff.restarted,
          refiltered: diff.refiltered,
          restartRequired: replaced.restartRequired,
          warnings
        }
        yield* Effect.logInfo(`config reloaded from ${next.files.join(", ") || "no file"}`)
        yield* PubSub.publish(events, event)
        return event
      })

    const readAndApply: Effect.Effect<ReloadOutcome> = load(input).pipe(
      Effect.provideService(FileSystem.FileSystem, environment.FileSystem),
      Effect.provideService(Path.Path, environment.Path),
      Effect.flatMap(apply),
      Effect.catchAll((e) => refuse(e.message))
    )

    // Reloads coalesce: one runs, at most one waits behind it, and every request made while one
    // waits gets that one's outcome. A reload read after the request still sees the files as they
    // were then, so nothing is missed; a SIGHUP storm costs two reloads, not a backlog of them.
    // The reload runs in the watcher's scope, so a caller that goes away abandons only its wait.
    const scope = yield* Effect.scope
    let waiting: Deferred.Deferred<ReloadOutcome> | undefined
    const reload: Effect.Effect<ReloadOutcome> = Effect.suspend(() => {
      if (waiting !== undefined) return Deferred.await(waiting)
      const next = Deferred.unsafeMake<ReloadOutcome>(FiberId.none)
      waiting = next
      const started = Effect.sync(() => {
        if (waiting === next) waiting = undefined
      })
      return lock.withPermits(1)(Effect.zipRight(started, readAndApply)).pipe(
        Effect.intoDeferred(next),
        Effect.forkIn(scope),
        Effect.zipRight(Deferred.await(next))
      )
    })

    if (options.watch) {
      const debounce = Duration.decode(options.debounce ?? Duration.millis(150))
      const pokes = yield* Queue.sliding<void>(1)
      const watchers = yield* FiberMap.make<string>()

      /** Directories to watch and the file names that matter in each. */
      const targets = (config: LoadedConfig): ReadonlyMap<string, ReadonlySet<string>> => {
        const files = config.files.length > 0 || config.explicit
          ? config.files
          // Nothing loaded: a project file created in the working directory is picked up.
          : ProjectFileNames.map((name) => path.join(input.cwd, ...name.split("/")))
        const out = new Map<string, Set<string>>()
        for (const file of files) {
          const dir = path.dirname(file)
          out.set(dir, (out.get(dir) ?? new Set()).add(path.basename(file)))
        }
        return out
      }

      const watchDir = (dir: string, names: ReadonlySet<string>) =>
        fs.watch(dir).pipe(
          Stream.filter((event) => names.has(path.basename(event.path))),
          Stream.runForEach(() => Queue.offer(pokes, undefined)),
          // A directory that does not exist (yet) or a watch that broke is tried again.
          Effect.catchAll((e) => Effect.logDebug(`config watch on ${dir}: ${e.message}`)),
          Effect.repeat(Schedule.spaced(Duration.seconds(2)))
        )

      // What each watch looks for, so a reload that loads the same files leaves the watches alone.
      const watched = new Map<string, string>()
      const syncWatches = Effect.gen(function*() {
        const wanted = targets(current)
        for (const dir of [...watched.keys()]) {
          if (wanted.has(dir)) continue
          watched.delete(dir)
          yield* FiberMap.remove(watchers, dir)
        }
        for (const [dir, names] of wanted) {
          const key = [...names].sort().join("\u0000")
          if (watched.get(dir) === key) continue
          watched.set(dir, key)
          yield* FiberMap.run(watchers, dir, watchDir(dir, names))
        }
      })
      yield* syncWatches

      yield* Queue.take(pokes).pipe(
        Effect.zipRight(Effect.sleep(debounce)),
        Effect.zipRight(Queue.takeAll(pokes)),
        Effect.zipRight(reload),
        Effect.zipRight(syncWatches),
        Effect.forever,
        Effect.forkScoped
      )
    }

    return ConfigWatcher.of({
      reload,
      state: Effect.sync(() => Option.some(state)),
      subscribe: PubSub.subscribe(events)
    })
  })
