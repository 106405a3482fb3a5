/**
 * A relayed stdio host is judged by stdio's rules: a 2026-07-28 body whose `_meta` protocol version
 * no HTTP header could carry (non-ASCII, a control character) is answered -32022 Unsupported
 * protocol version, as in-process `serve` answers it — never a header mismatch, since a stdio host
 * sends no headers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as DaemonProcess from "./support/DaemonProcess.js"
import { error, result } from "./support/Replies.js"
import { Modern, open } from "./support/Revisions.js"
import { sandbox } from "./support/Sandbox.js"
import { era, start } from "./support/StdioServe.js"

describe.concurrent("serve --relay versions", () => {
  it.scoped.each(["2026-07-28\u00e9", "2026\n07-28"] as const)(
    "2026-07-28/relay/a _meta version %j that no header can carry is answered -32022, as on stdio",
    (version) =>
      Effect.gen(function*() {
        const sb = yield* sandbox
        const config = yield* sb.writeJson("mcpx.json", { mcpServers: { dual: era("dual") } })
        const daemon = yield* Effect.orDie(DaemonProcess.start(sb, { config }))
        const serve = yield* start({ servers: {} }, { args: ["--relay"], stateDir: daemon.stateDir })
        const host = yield* open(serve, Modern)
        const reply = yield* serve.request("odd", "tools/list", host.params({}, { "io.modelcontextprotocol/protocolVersion": version }))
        assert.strictEqual(error(reply).code, -32022, JSON.stringify(reply))
        result(yield* host.cheap("after"))
        yield* serve.end
        const run = yield* serve.exited
        assert.strictEqual(run.code, 0, run.stderr)
      })
  )
})
