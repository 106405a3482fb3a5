/**
 * The record of started upstream process groups, and reaping what a previous owner left: only
 * processes that are provably ours (the recorded leader with its recorded start time, or a member
 * carrying the owner's token) are stopped; a reused pid or an unmarked member is left alone. Run
 * with each source of process facts: `/proc`, and `ps` (the one macOS and the BSDs use).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FileName, OwnerVariable, ProcessGroups } from "../../src/os/ProcessGroups.js"
import * as ProcessTable from "../../src/os/ProcessTable.js"
import * as PsTable from "../../src/os/PsTable.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "mcpx-groups-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A process group of its own running `script`; the whole group is killed when the scope closes. */
const group = (script: string, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn("sh", ["-c", script], { detached: true, stdio: "ignore", env: { ...process.env, ...env } })),
    (child: ChildProcess) =>
      Effect.sync(() => {
        try {
          process.kill(-(child.pid ?? 0), "SIGKILL")
        } catch {
          // Gone already.
        }
      })
  )

const running = (pid: number) => ProcessTable.startTime(pid) !== undefined

/** Polled: another process's death sends this one no event. */
const until = (what: string, ok: () => boolean) =>
  Effect.suspend(() => (ok() ? Effect.void : Effect.fail(what))).pipe(
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("5 seconds")))
  )

const pidIn = (file: string) =>
  Effect.flatMap(
    until(`${file} written`, () => existsSync(file) && /^\d+\n?$/.test(readFileSync(file, "utf8"))),
    () => Effect.sync(() => Number(readFileSync(file, "utf8").trim()))
  )

for (const table of [ProcessTable.procfs, PsTable.ps]) {
  const withGroups = <A, E>(dir: string, use: (groups: typeof ProcessGroups.Service) => Effect.Effect<A, E>) =>
    Effect.flatMap(ProcessGroups, use).pipe(Effect.provide(ProcessGroups.layerFile(dir, table)))

  describe(`ProcessGroups (${table.name})`, () => {
    it.scopedLive("process-groups/record: each started group is in an owner-only file until it is stopped", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const leader = yield* group("exec sleep 600")
        const pid = leader.pid ?? 0
        const file = join(dir, FileName)
        yield* withGroups(dir, (groups) =>
          Effect.gen(function*() {
            yield* groups.started(pid, "sleep 600")
            assert.strictEqual(statSync(file).mode & 0o777, 0o600)
            const record = JSON.parse(readFileSync(file, "utf8")) as { owner: { pid: number; token: string }; groups: Array<{ pgid: number; start: string }> }
            assert.strictEqual(record.owner.pid, process.pid)
            assert.deepStrictEqual(groups.environment, { [OwnerVariable]: record.owner.token })
            assert.deepStrictEqual(record.groups.map((g) => [g.pgid, g.start]), [[pid, table.startTime(pid)]])
            yield* groups.stopped(pid)
            assert.deepStrictEqual((JSON.parse(readFileSync(file, "utf8")) as { groups: [] }).groups, [])
          }))
      }))

    it.scopedLive("process-groups/reap: what a previous owner provably started is stopped; strangers are left alone", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const token = "0123456789abcdef"
        const marker = { [OwnerVariable]: token }
        // Ours: a leader with its recorded start time, and (its leader gone) a member with the token;
        // one of them ignores SIGTERM, so SIGKILL must follow.
        const leader = yield* group("trap '' TERM; sleep 600 & wait")
        const orphanGroup = yield* group(`sleep 600 & echo $! > ${join(dir, "ours.pid")}; exit 0`, marker)
        // Strangers: a leader whose start time is not the recorded one (a reused pid), and a member of
        // a recorded group without the token.
        const reused = yield* group("exec sleep 600")
        const unmarkedGroup = yield* group(`sleep 600 & echo $! > ${join(dir, "stranger.pid")}; exit 0`)
        const ours = yield* pidIn(join(dir, "ours.pid"))
        const stranger = yield* pidIn(join(dir, "stranger.pid"))
        yield* until("the leaders that exit have exited", () => !running(orphanGroup.pid ?? 0) && !running(unmarkedGroup.pid ?? 0))
        const leaderPid = leader.pid ?? 0
        yield* until("the leader's child started", () => ProcessTable.membersOf(leaderPid).length === 2)
        writeFileSync(
          join(dir, FileName),
          JSON.stringify({
            version: 1,
            owner: { pid: 1, token, boot: table.bootId() },
            groups: [
              { pgid: leaderPid, start: table.startTime(leaderPid), command: "ours" },
              { pgid: orphanGroup.pid, start: "1", command: "ours, leader gone" },
              { pgid: reused.pid, start: "1", command: "not ours" },
              { pgid: unmarkedGroup.pid, start: "1", command: "not ours either" }
            ]
          })
        )
        const child = ProcessTable.membersOf(leaderPid).find((m) => m.pid !== leaderPid)?.pid ?? 0
        const report = yield* withGroups(dir, (groups) => groups.reapLeftovers)
        assert.strictEqual(report.groups, 4)
        // The live leader vouches for its whole group, its unmarked child included.
        assert.sameMembers(report.stopped.map((p) => p.pid), [leaderPid, child, ours])
        assert.strictEqual(report.strangers, 2)
        yield* until("our processes are gone", () => !running(leaderPid) && !running(child) && !running(ours))
        assert.isTrue(running(reused.pid ?? 0), "a reused pid was killed")
        assert.isTrue(running(stranger), "an unmarked member was killed")
        const record = JSON.parse(readFileSync(join(dir, FileName), "utf8")) as { owner: { token: string }; groups: [] }
        assert.notStrictEqual(record.owner.token, token)
        assert.deepStrictEqual(record.groups, [])
      }))
  })
}
