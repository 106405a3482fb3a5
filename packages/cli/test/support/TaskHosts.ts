/**
 * Shared by the tasks-* end-to-end tests (issue 26): a daemon in front of the SDK 1.x task upstream
 * (sdk-v1-tasks, logging into its sandbox), a 2026-07-28 host declaring the tasks extension as
 * raw JSON-RPC (no SDK speaks the extension), a bounded `tasks/get` poll, and waits on the
 * upstream's log.
 */
import { assert } from "@effect/vitest"
import { Fixtures } from "@mcpx-fx/testing"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as EraLog from "./EraLog.js"
import { type Endpoint, modernHeaders } from "./HttpMcp.js"
import * as HttpDaemon from "./HttpDaemon.js"
import { result } from "./Replies.js"
import { modernMeta } from "./Revisions.js"
import type { Sandbox } from "./Sandbox.js"
import type { Message } from "./StdioServe.js"

export const TasksExtension = "io.modelcontextprotocol/tasks"

/** What a 2026-07-28 host that can take tasks and answer forms declares. */
export const declaringTasks: Message = { elicitation: { form: {} }, extensions: { [TasksExtension]: {} } }

/** The sdk-v1-tasks upstream, logging what it receives into the sandbox's `up.log`. */
export const upstream = (sb: Sandbox) => Fixtures.stdioCommand("sdk-v1-tasks", ["--log", sb.path("up.log")])

/** A daemon (the bundle) with the sdk-v1-tasks upstream as `up`, plus `settings`. */
export const daemon = (settings: Message = {}): Effect.Effect<HttpDaemon.Running & { readonly log: string }, never, Scope.Scope> =>
  Effect.map(
    Effect.orDie(HttpDaemon.start((sb) => ({ servers: { up: upstream(sb) }, settings }))),
    (running) => ({ ...running, log: running.sandbox.path("up.log") })
  )

/** The name a 2026-07-28 request mirrors into `Mcp-Name`. */
const nameOf = (method: string, params: Message): string | undefined =>
  method === "tools/call" ? String(params.name) : typeof params.taskId === "string" ? params.taskId : undefined

/**
 * A 2026-07-28 host on `http` declaring `capabilities`, of session `who` (`dev.mcpx/session`;
 * none when undefined): each request's one reply.
 */
export const modernHost =
  (http: Endpoint, who: string | undefined, capabilities: Message = declaringTasks) => (id: string, method: string, params: Message): Effect.Effect<Message> =>
    Effect.map(
      http.post(
        { jsonrpc: "2.0", id, method, params: { ...params, _meta: modernMeta(capabilities, who === undefined ? {} : { "dev.mcpx/session": who }) } },
        { headers: modernHeaders(method, nameOf(method, params)) }
      ),
      (reply) => {
        assert.isObject(reply.body, `${reply.status} ${reply.text}`)
        return reply.body as Message
      }
    )

/**
 * Polls `get` (a `tasks/get`; the extension is a polling protocol) until the task reads `status`,
 * at most `rounds` times, 100 ms apart. Needs the live clock.
 */
export const pollUntil = (get: Effect.Effect<Message>, status: string, rounds = 600): Effect.Effect<Readonly<Record<string, unknown>>> =>
  Effect.flatMap(get, (m) => {
    const task = result(m)
    if (task.status === status) return Effect.succeed(task)
    if (rounds <= 0) return Effect.dieMessage(`the task never read ${status}: ${JSON.stringify(m)}`)
    return Effect.zipRight(Effect.sleep("100 millis"), pollUntil(get, status, rounds - 1))
  })

/** The upstream's log lines as `<era> <method>` text. */
export const lines = (log: string): ReadonlyArray<string> => EraLog.read(log).map((l) => `${l.era} ${l.method}`)

/** The ids of the upstream's own tasks that reached `status` (the fixture notes `task <status> <id>`). */
export const upstreamTasks = (log: string, status: string): ReadonlyArray<string> =>
  EraLog.read(log).filter((l) => l.era === "task" && l.method.startsWith(`${status} `)).map((l) => l.method.slice(status.length + 1))

/**
 * Waits (on the file, not the clock) until the upstream's log satisfies `ready`, for at most
 * `seconds`; then dies saying `what` did not happen, with the log. Needs the live clock.
 */
export const upstreamSaw = (log: string, ready: (lines: ReadonlyArray<string>) => boolean, what: string, seconds = 30): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.timeoutOption(EraLog.until(log, () => ready(lines(log))), `${seconds} seconds`),
    (saw) => Option.isSome(saw) ? Effect.void : Effect.dieMessage(`within ${seconds}s, ${what}; the upstream's log:\n${lines(log).join("\n")}`)
  )
