/**
 * The upstream process groups a daemon started, recorded in its state directory so that the next
 * daemon can stop the ones a crashed daemon left behind.
 *
 * Every stdio upstream runs in a process group of its own (its leader's pid is the group id).
 * A daemon that is killed outright leaves those groups running: a well-behaved server leaves when
 * its stdin closes, but a grandchild that ignores the end of its input (or SIGTERM) does not. So
 * `<stateDir>/upstream-groups.json` (0600, written atomically on every start and stop) holds the
 * owner's token and boot, and for each group its id, its leader's start time and its command.
 *
 * `reapLeftovers`, run by the next daemon once it holds the state directory's lock, stops them —
 * but only processes that are provably ours, never an unrelated process that reuses a pid. A
 * group id is its leader's pid, which no new process can be given while the group lives; so when
 * the recorded leader is still there (same pid, same start time, same boot) every member of its
 * group is ours, and when a process with that pid has another start time the group is someone
 * else's. With the leader gone, a member is ours only if its environment carries the owner's
 * token (`MCPXFX_OWNER=<token>`, given to every upstream we start and inherited by what it starts).
 * Each such process gets SIGTERM, then SIGKILL if it is still there a moment later.
 *
 * The facts come from `/proc` on Linux and from `ps` elsewhere (macOS, the BSDs), with the same
 * rules: `ps` gives the group, the start time (to the second, enough since a pid comes back only
 * after the pid space wraps) and, with its environment flag, the token. Where `ps` cannot show a
 * process's environment (macOS hides it for restricted binaries) that process is not provably
 * ours once its leader is gone, and it is left alone: the process group id with a start time and
 * a command line would not do, since once every process of our group is gone the same id can lead
 * a stranger's group, whose members are as new and may run the same command. Where neither source
 * answers, nothing is verified and nothing is killed.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import * as ProcessTable from "./ProcessTable.js"
import * as PsTable from "./PsTable.js"
import * as StateFile from "./StateFile.js"

/** The file's name inside the state directory. */
export const FileName = "upstream-groups.json"

/** The environment variable every started upstream carries: the owning daemon's token. */
export const OwnerVariable = "MCPXFX_OWNER"

/** A recorded group is a few hundred bytes; this is thousands of upstreams. */
const MaxFileBytes = 1024 * 1024

/** How long a leftover has after SIGTERM before SIGKILL. */
const ReapGrace = Duration.seconds(1)

const Group = Schema.Struct({
  pgid: Schema.Number.pipe(Schema.int(), Schema.positive()),
  /** The leader's start time (`ProcessTable.ProcStat.start`); absent where it could not be read. */
  start: Schema.optionalWith(Schema.String, { exact: true }),
  command: Schema.String
})
type Group = typeof Group.Type

const GroupsFile = Schema.Struct({
  version: Schema.Literal(1),
  owner: Schema.Struct({
    pid: Schema.Number,
    token: Schema.String,
    boot: Schema.optionalWith(Schema.String, { exact: true })
  }),
  groups: Schema.Array(Group)
})
type GroupsFile = typeof GroupsFile.Type

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(GroupsFile))

/** What reaping found. */
export interface ReapReport {
  /** Groups the file named. */
  readonly groups: number
  /** Processes stopped (each verified as ours first). */
  readonly stopped: ReadonlyArray<{ readonly pid: number; readonly command: string }>
  /** Live processes in those groups that could not be shown to be ours, and were left alone. */
  readonly strangers: number
}

/** Where the groups of the stdio upstreams this process starts are recorded. */
export class ProcessGroups extends Context.Tag("@mcpx-fx/upstream/ProcessGroups")<ProcessGroups, {
  /** Environment entries for every process started, so a leftover can be told from a stranger. */
  readonly environment: Readonly<Record<string, string>>
  /** A process group was started (`pgid`: its leader's pid). */
  readonly started: (pgid: number, command: string) => Effect.Effect<void>
  /** A process group is gone (every member stopped). */
  readonly stopped: (pgid: number) => Effect.Effect<void>
  /**
   * Stops what a previous owner of the state directory left running, then starts the record
   * afresh. Run it once, holding the state directory's lock, before any upstream starts.
   */
  readonly reapLeftovers: Effect.Effect<ReapReport>
}>() {
  /**
   * Recorded in `<stateDir>/upstream-groups.json`. `table` is where process facts come from:
   * `/proc` where there is one, else `ps` (a test passes `PsTable.ps` to try that path on Linux).
   */
  static readonly layerFile = (stateDir: string, table: ProcessTable.Table = nativeTable()): Layer.Layer<ProcessGroups> =>
    Layer.effect(ProcessGroups, makeFile(stateDir, table))
  /** Nothing recorded, nothing reaped (a process that does not own its state directory). */
  static readonly layerNone: Layer.Layer<ProcessGroups> = Layer.succeed(ProcessGroups, {
    environment: {},
    started: () => Effect.void,
    stopped: () => Effect.void,
    reapLeftovers: Effect.succeed({ groups: 0, stopped: [], strangers: 0 })
  })
}

/** `/proc` where it can be read, else `ps`. */
const nativeTable = (): ProcessTable.Table => (ProcessTable.procfs.available() ? ProcessTable.procfs : PsTable.ps)

const readFile = (file: string): Effect.Effect<GroupsFile | undefined> =>
  Effect.flatMap(StateFile.read(file, MaxFileBytes), (result) => {
    switch (result._tag) {
      case "Missing":
        return Effect.succeed(undefined)
      case "Refused":
        return Effect.as(Effect.logWarning(`${file} ignored: ${result.reason}; it is replaced`), undefined)
      case "Text": {
        const decoded = decodeFile(result.text)
        return Either.isRight(decoded)
          ? Effect.succeed(decoded.right)
          : Effect.as(Effect.logWarning(`${file} ignored: not a record of upstream process groups; it is replaced`), undefined)
      }
    }
  })

/** The recorded groups' processes that are provably ours (see the module comment). */
const oursIn = (record: GroupsFile, table: ProcessTable.Table) => {
  const marker = `${OwnerVariable}=${record.owner.token}`
  const sameBoot = record.owner.boot !== undefined && record.owner.boot === table.bootId()
  const ours: Array<{ readonly pid: number; readonly start: string; readonly command: string }> = []
  let strangers = 0
  for (const group of record.groups) {
    const members = table.membersOf(group.pgid)
    const leader = members.find((m) => m.pid === group.pgid)
    const leaderIsOurs = leader !== undefined && sameBoot && leader.start === group.start
    for (const m of members) {
      const mine = leader === undefined ? table.environHas(m.pid, marker) : leaderIsOurs
      if (mine) {
        ours.push({ pid: m.pid, start: m.start, command: table.commandLine(m.pid) ?? group.command })
      } else strangers++
    }
  }
  return { ours, strangers }
}

const signal = (pid: number, sig: NodeJS.Signals) =>
  Effect.sync(() => {
    try {
      process.kill(pid, sig)
    } catch {
      // Gone already.
    }
  })

const reap = (record: GroupsFile, table: ProcessTable.Table): Effect.Effect<ReapReport> =>
  Effect.gen(function*() {
    if (!table.available()) {
      yield* Effect.logDebug(
        `process facts (${table.name}) cannot be read here: leftover upstream process groups cannot be verified, so none is stopped`
      )
      return { groups: record.groups.length, stopped: [], strangers: 0 }
    }
    const { ours, strangers } = oursIn(record, table)
    // Still the same process: alive and started when it was seen.
    const stillThere = (p: { readonly pid: number; readonly start: string }) => table.startTime(p.pid) === p.start
    yield* Effect.forEach(ours, (p) => signal(p.pid, "SIGTERM"), { discard: true })
    // Other processes' deaths send no event to this one: polled, briefly and boundedly.
    yield* Effect.suspend(() => (ours.some(stillThere) ? Effect.fail("running") : Effect.void)).pipe(
      Effect.retry(Schedule.spaced(Duration.millis(25)).pipe(Schedule.upTo(ReapGrace))),
      Effect.ignore
    )
    yield* Effect.forEach(ours.filter(stillThere), (p) => signal(p.pid, "SIGKILL"), { discard: true })
    return { groups: record.groups.length, stopped: ours.map(({ command, pid }) => ({ pid, command })), strangers }
  })

const makeFile = (stateDir: string, table: ProcessTable.Table) =>
  Effect.gen(function*() {
    const file = Path.join(stateDir, FileName)
    const token = randomBytes(16).toString("hex")
    const boot = table.bootId()
    const groups = new Map<number, Group>()
    const lock = yield* Effect.makeSemaphore(1)

    const persist = lock.withPermits(1)(Effect.suspend(() => {
      const record: GroupsFile = {
        version: 1,
        owner: { pid: process.pid, token, ...(boot !== undefined ? { boot } : {}) },
        groups: [...groups.values()]
      }
      return StateFile.writeAtomic(file, `${JSON.stringify(record, null, 2)}\n`).pipe(
        Effect.catchAll((e) => Effect.logWarning(`upstream process groups not recorded: ${e.message}`))
      )
    }))

    const started = (pgid: number, command: string) =>
      Effect.suspend(() => {
        const start = table.startTime(pgid)
        groups.set(pgid, { pgid, command, ...(start !== undefined ? { start } : {}) })
        return persist
      })

    const stopped = (pgid: number) => Effect.suspend(() => (groups.delete(pgid) ? persist : Effect.void))

    const reapLeftovers = Effect.gen(function*() {
      const record = yield* readFile(file)
      const report = record === undefined || record.groups.length === 0
        ? { groups: 0, stopped: [], strangers: 0 }
        : yield* reap(record, table)
      if (report.stopped.length > 0) {
        yield* Effect.logWarning(
          `stopped ${report.stopped.length} upstream process(es) that a daemon which did not shut down (pid ${record?.owner.pid}) ` +
            `left running: ${report.stopped.map((p) => `${p.pid} (${p.command.slice(0, 80)})`).join(", ")}`
        )
      }
      yield* persist
      return report
    })

    return ProcessGroups.of({ environment: { [OwnerVariable]: token }, started, stopped, reapLeftovers })
  })
