/**
 * The set of servers the gateway runs, which a config reload replaces while calls go on.
 *
 * Every call reads it, so it is one reference read synchronously (no fiber, no lock): a reload
 * swaps the whole set in one write, and a call sees either the old set or the new one, never a mix.
 * Diffing two configurations says what a reload must do to each server: start nothing for an
 * added one (it starts when first used), stop a removed one and restart a redefined one once their
 * calls finish, tell hosts about one whose tool filter changed, and leave the rest untouched.
 */
import type { ConfiguredServer } from "@mcpx-fx/config/Config"

/** The servers in effect; `servers` is replaced whole by `replace`. */
export interface ServerTable<S> {
  readonly servers: ReadonlyArray<S>
  readonly replace: (next: ReadonlyArray<S>) => void
}

/** A table starting with `initial`. */
export const make = <S>(initial: ReadonlyArray<S>): ServerTable<S> => {
  let current = initial
  return {
    get servers() {
      return current
    },
    replace: (next) => {
      current = next
    }
  }
}

/** What a reload changes, by server name. */
export interface Diff {
  /** New names: they start when first used. */
  readonly added: ReadonlyArray<string>
  /** Gone: stopped once their calls finish. */
  readonly removed: ReadonlyArray<string>
  /** How they are started or pooled changed: stopped once their calls finish, started anew when next used. */
  readonly restarted: ReadonlyArray<string>
  /** Only what hosts see of their tools changed (`tools`, `excludeTools`, `expose`): their processes stay. */
  readonly refiltered: ReadonlyArray<string>
  /** Nothing changed: their processes stay. */
  readonly unchanged: ReadonlyArray<string>
}

// The definition and pool options decide the process; the file it came from does not.
const processIdentity = (s: ConfiguredServer): string => JSON.stringify({ definition: s.definition, pool: s.pool })
const viewIdentity = (s: ConfiguredServer): string => JSON.stringify({ tools: s.tools ?? null, excludeTools: s.excludeTools ?? null, expose: s.expose ?? null })

/** Compares two configurations' servers. */
export const diff = (before: ReadonlyArray<ConfiguredServer>, after: ReadonlyArray<ConfiguredServer>): Diff => {
  const old = new Map(before.map((s) => [s.name, s]))
  const names = new Set(after.map((s) => s.name))
  const added: Array<string> = []
  const restarted: Array<string> = []
  const refiltered: Array<string> = []
  const unchanged: Array<string> = []
  for (const server of after) {
    const was = old.get(server.name)
    if (was === undefined) added.push(server.name)
    else if (processIdentity(was) !== processIdentity(server) || was.namespace !== server.namespace) restarted.push(server.name)
    else if (viewIdentity(was) !== viewIdentity(server)) refiltered.push(server.name)
    else unchanged.push(server.name)
  }
  const removed = before.filter((s) => !names.has(s.name)).map((s) => s.name)
  return { added, removed, restarted, refiltered, unchanged }
}

/** Whether a reload changes anything hosts can see. */
export const changesAnything = (d: Diff): boolean => d.added.length + d.removed.length + d.restarted.length + d.refiltered.length > 0
