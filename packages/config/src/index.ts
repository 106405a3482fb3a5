/**
 * @mcpx-fx/config: what mcpx-fx is told — the `mcpServers` files (discovery, JSONC, merge,
 * `${VAR}` expansion, edits under a lock), the settings registry with each value's source, the
 * state directory, and the one "did you mean" every name lookup uses.
 */
/** The `mcpServers` config file: discovery, JSONC, merge, `${VAR}` expansion, server definitions. */
export * as Config from "./Config.js"
/** Finding, reading and writing config files. */
export * as ConfigFile from "./ConfigFile.js"
/** Edits to a config file that keep its comments, under a lock. */
export * as ConfigEdit from "./ConfigEdit.js"
/** The settings registry and its resolved values with their sources. */
export * as Settings from "./Settings.js"
/** Every setting: its path, flag, variable, codec, default and whether it applies without a restart. */
export * as SettingsRegistry from "./SettingsRegistry.js"
/** Where a value came from, a listing's rows, runtime change answers, the settings errors. */
export * as SettingsModel from "./SettingsModel.js"
/** Where mcpx-fx keeps its state. */
export * as StateDir from "./StateDir.js"
/** "Did you mean": the one suggestion for every mistyped name. */
export * as Suggest from "./Suggest.js"
