/**
 * What the fleet tests run: one config for every instance (a modern echo server, the SDK 1.x server
 * that asks questions, the SDK 1.x task server), a fleet of them behind nginx as a Layer, and
 * readers of what nginx logged about which instance answered.
 */
import { Fixtures } from "@mcpx-fx/testing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { existsSync, readFileSync, watch } from "node:fs"
import { join } from "node:path"
import * as Fleet from "./Fleet.js"
import { type Sandbox, sandbox } from "./Sandbox.js"
import { era } from "./StdioServe.js"

/** The config every instance reads; the task server logs into the sandbox's `up.log`. */
export const config = (sb: Sandbox) =>
  sb.writeJson("mcpx.json", {
    mcpServers: {
      mod: era("modern-only"),
      legacy: Fixtures.stdioCommand("sdk-v1-legacy"),
      up: Fixtures.stdioCommand("sdk-v1-tasks", ["--log", sb.path("up.log")])
    },
    // A question waits for its person far longer than any test runs.
    settings: { "questions.ttl": "10m" }
  })

/** A running fleet and its sandbox. */
export interface Running {
  readonly fleet: Fleet.Fleet
  readonly sandbox: Sandbox
}

/** A fleet of `instances` shared by the tests of a describe block. */
export class TheFleet extends Context.Tag("cli-test/TheFleet")<TheFleet, Running>() {
  static readonly layer = (instances: number) =>
    Layer.scoped(
      TheFleet,
      Effect.orDie(Effect.gen(function*() {
        const sb = yield* sandbox
        const fleet = yield* Fleet.start(sb, yield* config(sb), instances)
        return { fleet, sandbox: sb }
      }))
    )
}

/** One line of nginx's access log (the `mcpx` format of scripts/fleet-nginx.mjs). */
export interface Logged {
  readonly request: string
  readonly status: number
  readonly upstream: string
  readonly method: string
}

const accessLogFile = (fleet: Fleet.Fleet) => join(fleet.info.dir, "nginx", "logs", "access.log")

/** What nginx has logged so far. */
export const accessLog = (fleet: Fleet.Fleet): ReadonlyArray<Logged> => {
  const file = accessLogFile(fleet)
  if (!existsSync(file)) return []
  return readFileSync(file, "utf8").split("\n").flatMap((line) => {
    const m = /^\S+ "([^"]*)" (\d+) upstream=(\S*) upstream_status=\S* method=(\S*)$/.exec(line)
    return m === null ? [] : [{ request: m[1]!, status: Number(m[2]), upstream: m[3]!, method: m[4]! }]
  })
}

/**
 * Waits until `ready` accepts nginx's access log, for at most 30 s. nginx writes a request's line
 * once it has sent the response, so a client can hold the response before the line is there.
 */
export const accessLogUntil = (fleet: Fleet.Fleet, ready: (log: ReadonlyArray<Logged>) => boolean, what: string) =>
  Effect.async<ReadonlyArray<Logged>>((resume) => {
    let done = false
    const watcher = watch(accessLogFile(fleet), () => check())
    const check = () => {
      if (done) return
      const log = accessLog(fleet)
      if (!ready(log)) return
      done = true
      watcher.close()
      resume(Effect.succeed(log))
    }
    check()
    return Effect.sync(() => {
      done = true
      watcher.close()
    })
  }).pipe(
    Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => `nginx never logged ${what}` }),
    Effect.orDieWith((e) => new Error(e))
  )
