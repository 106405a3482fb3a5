/**
 * The service that resolves the settings registry (SettingsRegistry.ts). Values are resolved with
 * the precedence default < file < env < flag < runtime, and each remembers which layer it came
 * from. The runtime layer (`PUT /v1/settings/{path}`) holds only hot settings: a cold one would
 * report a value nothing in the running process uses, so it is refused with `restartRequired`
 * instead.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Codec from "./internal/Codec.js"
import * as Suggest from "./Suggest.js"
import { InvalidSettingValue, type Resolved, SetResult, SettingRow, SettingsError, type Source, UnknownSetting, UnsetResult } from "./SettingsModel.js"
import {
  type AnySetting,
  byFlag,
  byPath,
  erase,
  type Erased,
  fileKeyOf,
  lookup,
  paths,
  registry,
  type SettingPath,
  type SettingValue,
  unknownSetting
} from "./SettingsRegistry.js"

// ---------------------------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------------------------

/** The `settings` object of one config file. */
export interface SettingsFile {
  /** The file's path, as reported in `file:<path>` sources. */
  readonly file: string
  /** Raw JSON values keyed by setting path. */
  readonly values: Readonly<Record<string, unknown>>
}

/** Everything the settings are resolved from; the CLI and tests pass these in explicitly. */
export interface SettingsInput {
  /** Config files' `settings` objects, nearest first (the first file that sets a key wins). */
  readonly files?: ReadonlyArray<SettingsFile>
  /** The environment; only registry variables are read, and an empty value counts as unset. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Flag values keyed by flag name (`--pool-max`; the dashes may be left off). */
  readonly flags?: Readonly<Record<string, string | undefined>>
}

interface Entry {
  readonly value: unknown
  readonly source: Source
}

const decodeAt = (
  schema: Schema.Schema<unknown, unknown>,
  raw: unknown,
  source: Source,
  key: string
): Either.Either<Entry, SettingsError> =>
  Either.mapBoth(Schema.decodeUnknownEither(schema)(raw), {
    onLeft: (e) => new SettingsError({ source, key, detail: Codec.firstIssue(e).message }),
    onRight: (value) => ({ value, source })
  })

const textSchema = (s: Erased): Schema.Schema<unknown, unknown> => s.fromString as Schema.Schema<unknown, unknown>

/**
 * Resolves every setting. Each layer that sets a value is decoded even when a higher layer
 * overrides it, so a typo in a file is reported instead of lying in wait for the day the env
 * var that hides it is removed.
 */
export const resolveAll = (input: SettingsInput): Either.Either<ReadonlyMap<SettingPath, Entry>, SettingsError> => {
  const entries = new Map<SettingPath, Entry>()
  for (const s of registry) entries.set(s.path, { value: s.default, source: "default" })

  const fromFiles = new Set<string>()
  for (const file of input.files ?? []) {
    const source: Source = `file:${file.file}`
    for (const [path, raw] of Object.entries(file.values)) {
      const setting = byPath.get(path)
      const key = fileKeyOf(path)
      if (setting === undefined) return Either.left(new SettingsError({ source, key, detail: unknownSetting(path) }))
      const decoded = decodeAt(setting.fromJson, raw, source, key)
      if (Either.isLeft(decoded)) return Either.left(decoded.left)
      if (fromFiles.has(path)) continue
      fromFiles.add(path)
      entries.set(setting.path, decoded.right)
    }
  }

  const env = input.env ?? {}
  for (const s of registry.map(erase)) {
    const raw = env[s.env]
    if (raw === undefined || raw === "") continue
    const decoded = decodeAt(textSchema(s), raw, `env:${s.env}`, s.env)
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    entries.set(s.path, decoded.right)
  }

  for (const [name, raw] of Object.entries(input.flags ?? {})) {
    if (raw === undefined) continue
    const flag = name.startsWith("--") ? name : `--${name}`
    const setting = byFlag.get(flag)
    if (setting === undefined) {
      const detail = `unknown setting flag; expected one of: ${registry.map((s) => s.flag).join(", ")}`
      return Either.left(new SettingsError({ source: `flag:${flag}`, key: flag, detail }))
    }
    const decoded = decodeAt(textSchema(setting), raw, `flag:${flag}`, flag)
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    entries.set(setting.path, decoded.right)
  }
  return Either.right(entries)
}

/** What a secret's value shows as once set. */
export const Hidden = "[redacted]"

const shownJson = (setting: Erased, value: unknown): unknown =>
  setting.secret && setting.format(value) !== "" ? Hidden : Schema.encodeSync(setting.fromJson)(value)

const shownText = (setting: Erased, value: unknown): string => setting.secret && setting.format(value) !== "" ? Hidden : setting.format(value)

/** A setting's default as text, as a listing shows it before anything is set (the CLI's flag help). */
export const defaultText = (setting: AnySetting): string => shownText(erase(setting), setting.default)

const rowOf = (setting: Erased, entry: Entry): SettingRow => ({
  path: setting.path,
  value: shownJson(setting, entry.value),
  text: shownText(setting, entry.value),
  default: Schema.encodeSync(setting.fromJson)(setting.default),
  source: entry.source,
  env: setting.env,
  flag: setting.flag,
  hot: setting.hot,
  expected: setting.expected,
  description: setting.description
})

/** The settings service: typed reads of effective values, their sources, and runtime overrides. */
export interface SettingsService {
  /** The effective value of one setting, typed by its path. */
  readonly get: <P extends SettingPath>(path: P) => Effect.Effect<SettingValue<P>>
  /** The effective value and where it came from. */
  readonly resolve: <P extends SettingPath>(path: P) => Effect.Effect<Resolved<P>>
  /** Every setting, in registry order, as `settings list` and `/v1/settings` show it. */
  readonly list: Effect.Effect<ReadonlyArray<SettingRow>>
  /**
   * Sets a runtime override from a JSON value (a string is read as an env var's text would be).
   * A hot setting takes effect at once; a cold one is checked but not stored (`restartRequired`).
   */
  readonly set: (path: string, value: unknown) => Effect.Effect<SetResult, UnknownSetting | InvalidSettingValue>
  /** Drops a runtime override, so the file, env or flag value (or the default) is in effect again. */
  readonly unset: (path: string) => Effect.Effect<UnsetResult, UnknownSetting>
  /**
   * Takes the `settings` objects of reloaded config files. Hot settings take their new file values
   * at once; a cold one that changed keeps its running value and is named in `restartRequired`.
   */
  readonly replaceFiles: (files: ReadonlyArray<SettingsFile>) => Effect.Effect<FilesReplaced, SettingsError>
  /**
   * A number that changes whenever an effective value may have (a runtime change, a reload), so
   * what is worked out from settings on every call can be kept until it does. A plain read, not
   * an effect: a call's path asks it where a step of its own would cost more than the read.
   */
  readonly generation: () => number
}

/** What a config reload did to the settings. */
export interface FilesReplaced {
  /** Hot settings whose value changed and now apply. */
  readonly applied: ReadonlyArray<SettingPath>
  /** Cold settings whose file value changed; the running value stays until a restart. */
  readonly restartRequired: ReadonlyArray<SettingPath>
}

/** The refusal of a path no registry entry has, naming the closest paths. */
export const unknownSettingError = (path: string): UnknownSetting => new UnknownSetting({ path, suggestions: [...Suggest.closest(path, paths)] })

/** Builds the service from explicit inputs; fails with the first refused value. */
export const make = Effect.fn("Settings.make")(function*(input: SettingsInput) {
  // Replaced whole by a config reload (replaceFiles); read on every get.
  let base = yield* resolveAll(input)
  const overridden = [...base].filter(([, e]) => e.source !== "default").map(([p, e]) => `${p}=${e.source}`)
  yield* Effect.logDebug("settings resolved").pipe(Effect.annotateLogs("overrides", overridden.join(" ")))
  // Runtime overrides sit apart from the resolved layers, so dropping one brings back exactly the
  // value the file, env or flag gave.
  const runtime = yield* Ref.make(new Map<SettingPath, Entry>())
  let generation = 0
  const baseEntry = (path: SettingPath): Entry => base.get(path) ?? { value: lookup(path).default, source: "default" }
  const entryIn = (m: ReadonlyMap<SettingPath, Entry>, path: SettingPath): Entry => m.get(path) ?? baseEntry(path)
  const entry = (path: SettingPath) => Effect.map(Ref.get(runtime), (m) => entryIn(m, path))
  const known = (path: string) =>
    Effect.suspend(() => {
      const setting = byPath.get(path)
      return setting === undefined
        ? Effect.fail(unknownSettingError(path))
        : Effect.succeed(setting)
    })
  const jsonOf = shownJson
  const service: SettingsService = {
    get: <P extends SettingPath>(path: P) => Effect.map(entry(path), (e) => e.value as SettingValue<P>),
    resolve: <P extends SettingPath>(path: P) => Effect.map(entry(path), (e): Resolved<P> => ({ path, value: e.value as SettingValue<P>, source: e.source })),
    list: Effect.map(Ref.get(runtime), (m) => registry.map((s) => rowOf(erase(s), entryIn(m, s.path)))),
    set: (path, raw) =>
      Effect.gen(function*() {
        const setting = yield* known(path)
        const value = yield* Either.match(Schema.decodeUnknownEither(setting.fromJson)(raw), {
          onLeft: (e) => Effect.fail(new InvalidSettingValue({ path, detail: Codec.firstIssue(e).message })),
          onRight: Effect.succeed
        })
        const shown = { path: setting.path, value: jsonOf(setting, value), text: shownText(setting, value) }
        if (!setting.hot) {
          const current = yield* entry(setting.path)
          return {
            ...shown,
            applied: false,
            restartRequired: true,
            source: current.source,
            note: `${setting.path} is read once at start: set it in a config file, ${setting.env} or ${setting.flag} and restart`
          } satisfies SetResult
        }
        yield* Ref.update(runtime, (m) => new Map(m).set(setting.path, { value, source: "runtime" }))
        generation++
        yield* Effect.logInfo(`setting ${setting.path}=${shownText(setting, value)} (runtime)`)
        return { ...shown, applied: true, restartRequired: false, source: "runtime" } satisfies SetResult
      }),
    unset: (path) =>
      Effect.gen(function*() {
        const setting = yield* known(path)
        const removed = yield* Ref.modify(runtime, (m) => {
          if (!m.has(setting.path)) return [false, m] as const
          const next = new Map(m)
          next.delete(setting.path)
          return [true, next] as const
        })
        generation++
        const now = baseEntry(setting.path)
        return {
          path: setting.path,
          removed,
          value: jsonOf(setting, now.value),
          text: shownText(setting, now.value),
          source: now.source
        } satisfies UnsetResult
      }),
    replaceFiles: (files) =>
      Effect.gen(function*() {
        const next = new Map(yield* resolveAll({ ...input, files }))
        const applied: Array<SettingPath> = []
        const restartRequired: Array<SettingPath> = []
        for (const s of registry.map(erase)) {
          const was = baseEntry(s.path)
          const now = next.get(s.path)
          if (now === undefined || s.format(now.value) === s.format(was.value)) continue
          if (s.hot) applied.push(s.path)
          else {
            restartRequired.push(s.path)
            next.set(s.path, was)
          }
        }
        base = next
        generation++
        return { applied, restartRequired } satisfies FilesReplaced
      }),
    generation: () => generation
  }
  return service
})

/** The resolved settings. */
export class Settings extends Context.Tag("@mcpx-fx/config/Settings")<Settings, SettingsService>() {
  /** Settings from explicit inputs (files' `settings` objects, an env record, flag values). */
  static readonly layer = (input: SettingsInput): Layer.Layer<Settings, SettingsError> => Layer.effect(Settings, make(input))

  /** Settings whose inputs are computed by an effect, e.g. read from the loaded `Config`. */
  static readonly layerEffect = <E, R>(
    input: Effect.Effect<SettingsInput, E, R>
  ): Layer.Layer<Settings, SettingsError | E, R> => Layer.effect(Settings, Effect.flatMap(input, make))

  /** Every setting at its default, for tests of services that read settings. */
  static readonly layerDefaults: Layer.Layer<Settings> = Layer.effect(Settings, Effect.orDie(make({})))
}

/** Reads one setting from the `Settings` in context. */
export const get = <P extends SettingPath>(path: P): Effect.Effect<SettingValue<P>, never, Settings> => Effect.flatMap(Settings, (s) => s.get(path))
