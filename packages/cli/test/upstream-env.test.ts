/**
 * What a stdio server inherits of mcpx-fx's environment: everything but the daemon's own secrets.
 * `MCPX_DAEMON_TOKEN` reached every upstream, which could then call every other server through
 * the daemon's TCP listener.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { sandbox } from "./support/Sandbox.js"

/** A server that says on stderr what it inherited, then exits (so its listing fails with that). */
const reporter = (env?: Record<string, string>) => ({
  command: process.execPath,
  args: [
    "-e",
    // No template literal: the config reads `${NAME}` as a variable to fill in.
    "const e = process.env; process.stderr.write('inherited-token:' + ('MCPX_DAEMON_TOKEN' in e) + ' path:' + ('PATH' in e) + " +
    "' configured:' + (e.MCPX_DAEMON_TOKEN === 'set-on-purpose') + '\\n'); process.exit(4)"
  ],
  ...(env === undefined ? {} : { env })
})

describe("a stdio server's environment", () => {
  it.scopedLive("upstream/env: MCPX_DAEMON_TOKEN is not inherited, the rest is; a server's own env may set it", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      yield* sb.writeJson(".mcpx.json", {
        mcpServers: { plain: reporter(), chosen: reporter({ MCPX_DAEMON_TOKEN: "set-on-purpose" }) }
      })
      const r = yield* sb.run(["tools", "--json"], { env: { MCPX_DAEMON_TOKEN: "the-daemons-own-secret-0123456789" } })
      const failures = (JSON.parse(r.stdout) as { failures: ReadonlyArray<{ server: string; message: string }> }).failures
      const said = (server: string) => failures.find((f) => f.server === server)?.message ?? ""
      assert.include(said("plain"), "inherited-token:false path:true configured:false", r.stdout)
      assert.include(said("chosen"), "inherited-token:true path:true configured:true", r.stdout)
    }), 60_000)
})
