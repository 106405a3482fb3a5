/**
 * The process facts `ps` gives (the source where there is no `/proc`), run here on Linux through
 * procps' `ps` against real child processes: they must say what `/proc` says about the same ones.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ProcessTable from "../../src/os/ProcessTable.js"
import { parseLstart, ps } from "../../src/os/PsTable.js"

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

/** Polled: another process's fork or exec sends this one no event. */
const until = (what: string, ok: () => boolean) =>
  Effect.suspend(() => (ok() ? Effect.void : Effect.fail(what))).pipe(
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("5 seconds")))
  )

describe("PsTable", () => {
  it("ps-table/lstart: the C-locale UTC text is read as epoch seconds; anything else is not a time", () => {
    assert.strictEqual(parseLstart("Fri Dec  4 16:25:48 2026"), String(Date.UTC(2026, 11, 4, 16, 25, 48) / 1000))
    assert.strictEqual(parseLstart("Mon Jan 12 03:04:05 2026"), String(Date.UTC(2026, 0, 12, 3, 4, 5) / 1000))
    assert.isUndefined(parseLstart("Fri Foo  4 16:25:48 2026"))
    assert.isUndefined(parseLstart("16:25"))
  })

  it.effect("ps-table/self: this process's start time is when it started, to the second", () =>
    Effect.sync(() => {
      assert.isTrue(ps.available())
      const start = Number(ps.startTime(process.pid))
      const expected = Date.now() / 1000 - process.uptime()
      assert.isAtMost(Math.abs(start - expected), 2, `ps says ${start}, the process started at ${expected}`)
      assert.match(ps.bootId() ?? "", /^pid1@\d+$/)
      assert.strictEqual(ps.bootId(), ps.bootId())
    }))

  it.scopedLive("ps-table/facts: group, start, command line and environment of a child, as /proc has them", () =>
    Effect.gen(function*() {
      // The `sleep 0` child is never waited for (its parent execs `sleep`): it stays a zombie.
      const leader = yield* group("sleep 0 & exec sleep 600", { MCPXFX_OWNER: "0123456789abcdef" })
      const pid = leader.pid ?? 0
      yield* until("the leader ran its command", () => ProcessTable.commandLine(pid) === "sleep 600")
      yield* until("the child is a zombie", () => ProcessTable.membersOf(pid).length === 1 && ps.membersOf(pid).length === 1)
      const s = ps.stat(pid)
      assert.strictEqual(s?.pgrp, pid)
      assert.strictEqual(s?.state, ProcessTable.stat(pid)?.state)
      // The same start twice, and the one /proc has (ticks after boot) to the second.
      assert.strictEqual(ps.startTime(pid), ps.startTime(pid))
      const procStart = Number(ProcessTable.startTime(pid)) / 100
      const selfProcStart = Number(ProcessTable.startTime(process.pid)) / 100
      const psDelta = Number(ps.startTime(pid)) - Number(ps.startTime(process.pid))
      assert.isAtMost(Math.abs(psDelta - (procStart - selfProcStart)), 1)
      assert.deepStrictEqual(ps.membersOf(pid).map((m) => m.pid), [pid])
      assert.strictEqual(ps.commandLine(pid), "sleep 600")
      assert.isTrue(ps.environHas(pid, "MCPXFX_OWNER=0123456789abcdef"))
      assert.isFalse(ps.environHas(pid, "MCPXFX_OWNER=0123456789abcde"))
      assert.isFalse(ps.environHas(pid, "MCPXFX_OWNER=fedcba9876543210"))
      // Another process of the same user was not given the token, so it does not show it.
      assert.isFalse(ps.environHas(process.pid, "MCPXFX_OWNER=0123456789abcdef"))
    }))

  it.scopedLive("ps-table/gone: a process that is gone, or a zombie, has no start time", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "mcpx-ps-table-"))),
        (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
      )
      const pidFile = join(dir, "zombie.pid")
      const go = join(dir, "go")
      // The child exits only once its parent is `sleep`, which never reaps it: a child that ended
      // before the exec could be reaped by the shell (seen under load), and never become a zombie.
      const leader = yield* group(
        `(while [ ! -e ${go} ]; do sleep 0.02; done) & echo $! > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; exec sleep 600`
      )
      const pid = leader.pid ?? 0
      yield* until("the leader ran its command", () => ProcessTable.commandLine(pid) === "sleep 600" && existsSync(pidFile))
      const zombie = Number(readFileSync(pidFile, "utf8"))
      writeFileSync(go, "")
      yield* until("the child is a zombie", () => ProcessTable.stat(zombie)?.state === "Z")
      assert.strictEqual(ps.stat(zombie)?.state, "Z")
      assert.strictEqual(ps.stat(zombie)?.pgrp, pid)
      assert.isUndefined(ps.startTime(zombie))
      assert.notInclude(ps.membersOf(pid).map((m) => m.pid), zombie)
      process.kill(-pid, "SIGKILL")
      yield* until("the leader is gone", () => ps.startTime(pid) === undefined)
      assert.isUndefined(ProcessTable.startTime(pid))
      assert.isUndefined(ps.commandLine(2 ** 31 - 1))
      assert.isFalse(ps.environHas(2 ** 31 - 1, "A=b"))
      assert.deepStrictEqual(ps.membersOf(2 ** 31 - 1), [])
    }))
})
