/**
 * The processes the daemon starts, through the bundle: an upstream behind `sh -c` whose grandchild
 * ignores SIGTERM is stopped with its whole process group at a graceful stop, and when the daemon
 * is killed outright, the next daemon on the same state directory stops what it left running —
 * and nothing that is not provably its own.
 */
import { assert, describe, it } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import * as DaemonProcess from "./support/DaemonProcess.js"
import * as Processes from "@mcpx-fx/testing/Processes"
import { type Sandbox, sandbox } from "./support/Sandbox.js"

// The grandchild ignores SIGTERM and writes its pid; `exec` makes the era-server the group's leader.
const stubborn = "process.on('SIGTERM', () => {}); require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1e9)"
const script = `"$1" -e "$2" "$3" >/dev/null 2>&1 </dev/null & exec "$1" "$4" --mode dual`

/** A config whose one upstream is `sh -c` starting the stubborn grandchild and the era-server. */
const shConfig = (sb: Sandbox) =>
  sb.writeJson("mcpx.json", {
    mcpServers: {
      wrapped: {
        command: "sh",
        args: ["-c", script, "sh", process.execPath, stubborn, sb.path("grandchild.pid"), Fixtures.fixtureScript("era-server")]
      }
    }
  })

const call = (url: string) =>
  Effect.promise(() =>
    fetch(`${url}/v1/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tool: "wrapped.echo", arguments: { message: "hi" } })
    }).then((r) => r.status)
  )

/** Starts a process of its own group that is nothing of mcpx-fx's; killed when the scope closes. */
const stranger = (command: string) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn("sh", ["-c", command], { detached: true, stdio: "ignore" })),
    (child) =>
      Effect.sync(() => {
        try {
          process.kill(-(child.pid ?? 0), "SIGKILL")
        } catch {
          // Gone already.
        }
      })
  )

describe("daemon processes", () => {
  it.scopedLive("daemon/processes/a graceful stop ends the upstream's whole process group, a grandchild that ignores SIGTERM included", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const daemon = yield* DaemonProcess.start(sb, { config: yield* shConfig(sb) })
      assert.strictEqual(yield* call(daemon.info.url), 200, daemon.stderr())
      const grandchild = yield* Processes.pidFrom(sb.path("grandchild.pid"))
      assert.isTrue(Processes.alive(grandchild))
      assert.strictEqual(yield* daemon.stop("SIGTERM"), 0)
      yield* Processes.gone(grandchild)
    }))

  it.scopedLive("daemon/processes/the next daemon stops the upstream processes a killed one left, and leaves strangers alone", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const config = yield* shConfig(sb)
      const state = sb.path("state")
      const first = yield* DaemonProcess.start(sb, { config, stateDir: state })
      assert.strictEqual(yield* call(first.info.url), 200, first.stderr())
      const grandchild = yield* Processes.pidFrom(sb.path("grandchild.pid"))
      const record = path.join(state, "upstream-groups.json")
      assert.strictEqual(statSync(record).mode & 0o777, 0o600)

      assert.strictEqual(yield* first.stop("SIGKILL"), "SIGKILL")
      // Its era-server left when its stdin closed; the grandchild did not.
      assert.isTrue(Processes.alive(grandchild), "nothing was left to reap")

      // Two strangers, recorded as if they were groups the dead daemon started: a group leader with
      // another start time (a reused pid), and a group whose leader is gone and whose member does
      // not carry the daemon's token.
      const leader = yield* stranger("exec sleep 600")
      const orphaned = yield* stranger(`sleep 600 & echo $! > ${sb.path("orphan.pid")}; exit 0`)
      const orphan = yield* Processes.pidFrom(sb.path("orphan.pid"))
      const recorded = JSON.parse(readFileSync(record, "utf8")) as { groups: Array<Record<string, unknown>> }
      recorded.groups.push({ pgid: leader.pid, start: "1", command: "not ours" }, { pgid: orphaned.pid, start: "1", command: "not ours" })
      writeFileSync(record, JSON.stringify(recorded))

      const second = yield* DaemonProcess.start(sb, { config, stateDir: state })
      yield* Processes.gone(grandchild)
      assert.include(second.stderr(), "left running")
      assert.isTrue(Processes.alive(leader.pid ?? 0), "a stranger with a reused pid was killed")
      assert.isTrue(Processes.alive(orphan), "a stranger in a recorded group was killed")
      // The record is the new daemon's now, with nothing of the old one in it.
      const now = JSON.parse(readFileSync(record, "utf8")) as { owner: { pid: number }; groups: ReadonlyArray<unknown> }
      assert.strictEqual(now.owner.pid, second.info.pid)
      assert.deepStrictEqual(now.groups, [])
    }))
})
