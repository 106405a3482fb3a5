/**
 * Tasks kept in PostgreSQL by the daemon (issue 26), through the bundle: `tasks.store` set to a
 * `postgres://` URL in the config file's settings, a database made for the run (through `test`,
 * on the test machines' 127.0.0.1:5432 with trust auth) and dropped after it. A daemon makes two
 * tasks on the SDK 1.x task upstream (one finished, one still running) and is stopped; a second
 * daemon on the same URL but another state directory reads the finished task's result and the
 * running one as `failed`, in either era. Neither writes the embedded SQLite file.
 * PostgreSQL being down fails the test, saying so.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { endpoint, openSession } from "./support/HttpMcp.js"
import { error, firstText, result } from "./support/Replies.js"
import { sandbox } from "./support/Sandbox.js"
import type { Message } from "./support/StdioServe.js"
import { modernHost, upstream, upstreamSaw } from "./support/TaskHosts.js"

const Admin = "postgres://postgres@127.0.0.1:5432/test"

const asAdmin = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(Layer.build(PgClient.layer({ url: Redacted.make(Admin), maxConnections: 1 })), (c) => f(Context.get(c, SqlClient.SqlClient))))

/** A database of its own, dropped (with whatever still holds it) when the scope closes; its URL. */
const freshDatabase = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `mcpx_cli_tasks_${randomBytes(6).toString("hex")}`
    yield* asAdmin((sql) => sql.unsafe(`CREATE DATABASE ${name}`)).pipe(
      Effect.timeout("20 seconds"),
      Effect.catchAll((e) => Effect.dieMessage(`PostgreSQL is needed at ${Admin} (CI starts it) and could not make a database: ${String(e)}`))
    )
    return { name, url: `postgres://postgres@127.0.0.1:5432/${name}` }
  }),
  ({ name }) => Effect.orDie(asAdmin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
)

/** The task ids in the database, and their statuses. */
const rows = (url: string) =>
  Effect.scoped(Effect.flatMap(
    Layer.build(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    (c) => Context.get(c, SqlClient.SqlClient)<{ task_id: string; status: string }>`SELECT task_id, status FROM mcpx_tasks`
  )).pipe(Effect.orDie, Effect.map((found) => new Map(found.map((r) => [r.task_id, r.status]))))

const owner = (who: string): Message => ({ _meta: { "dev.mcpx/session": who } })

describe("tasks in PostgreSQL", () => {
  it.scopedLive(
    "tasks/postgres/a second daemon on the same database, another state dir, reads the finished task and the running one as failed",
    () =>
      Effect.gen(function*() {
        const db = yield* freshDatabase
        const sb = yield* sandbox
        const config = yield* sb.writeJson("mcpx.json", { mcpServers: { up: upstream(sb) }, settings: { "tasks.store": db.url } })
        const log = sb.path("up.log")

        const first = yield* Effect.orDie(DaemonProcess.start(sb, { config, stateDir: sb.path("state-1") }))
        const before = yield* openSession(endpoint(first.info.mcp), "2025-11-25", { tasks: { list: {}, cancel: {} } })
        const task = (id: number, ms: number) =>
          Effect.map(
            before.request(id, "tools/call", { name: "up__work", arguments: { ms }, task: {}, ...owner("alice") }),
            (r) => String((result(r.body as Message).task as Message).taskId)
          )
        const done = yield* task(1, 0)
        assert.strictEqual(firstText((yield* before.request(2, "tasks/result", { taskId: done, ...owner("alice") })).body as Message), "worked 0ms")
        const running = yield* task(3, 600_000)
        yield* upstreamSaw(log, (seen) => seen.filter((l) => l === "legacy tasks/result").length >= 2, "the running task never reached the upstream")
        assert.strictEqual(result((yield* before.request(4, "tasks/get", { taskId: running, ...owner("alice") })).body as Message).status, "working")
        // Kept in the database, not in the state directory.
        const kept = yield* rows(db.url)
        assert.strictEqual(kept.get(done), "completed")
        assert.strictEqual(kept.get(running), "working")
        assert.isFalse(existsSync(sb.path("state-1", "tasks.db")))
        assert.strictEqual(yield* first.stop("SIGTERM"), 0)

        const second = yield* Effect.orDie(DaemonProcess.start(sb, { config, stateDir: sb.path("state-2") }))
        const after = yield* openSession(endpoint(second.info.mcp), "2025-11-25", { tasks: { list: {}, cancel: {} } })
        assert.strictEqual(firstText((yield* after.request(5, "tasks/result", { taskId: done, ...owner("alice") })).body as Message), "worked 0ms")
        const gone = result((yield* after.request(6, "tasks/get", { taskId: running, ...owner("alice") })).body as Message)
        assert.strictEqual(gone.status, "failed", JSON.stringify(gone))
        const why = error((yield* after.request(7, "tasks/result", { taskId: running, ...owner("alice") })).body as Message)
        assert.strictEqual(why.code, -32603)
        assert.match(why.message, /shutting down/)
        const listed = result((yield* after.request(8, "tasks/list", owner("alice"))).body as Message)
        assert.includeMembers((listed.tasks as ReadonlyArray<Message>).map((t) => t.taskId), [done, running])

        // A 2026-07-28 host of the same name reads them too; another name reads neither.
        const modern = modernHost(endpoint(second.info.mcp), "alice")
        const detailed = result(yield* modern("m-done", "tasks/get", { taskId: done }))
        assert.strictEqual(detailed.status, "completed", JSON.stringify(detailed))
        assert.deepStrictEqual((detailed.result as Message).content, [{ type: "text", text: "worked 0ms" }])
        const failed = result(yield* modern("m-running", "tasks/get", { taskId: running }))
        assert.strictEqual(failed.status, "failed", JSON.stringify(failed))
        assert.strictEqual((failed.error as Message).code, -32603)
        assert.strictEqual(error((yield* after.request(9, "tasks/get", { taskId: done, ...owner("mallory") })).body as Message).code, -32602)
        assert.isFalse(existsSync(sb.path("state-2", "tasks.db")))
      }),
    180_000
  )
})
