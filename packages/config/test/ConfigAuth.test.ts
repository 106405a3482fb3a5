import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpDefinition, OAuthSettings } from "@mcpx-fx/upstream/ServerDefinition"
import * as Config from "../src/Config.js"

const load = (config: unknown, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "mcpx-config-auth-" }))
    const file = `${dir}/mcpx.json`
    yield* fs.writeFileString(file, JSON.stringify(config))
    return yield* Effect.either(Config.load({ configFlag: file, env, cwd: dir, home: dir }))
  })

describe("a server's auth block", () => {
  it.scoped("builds OAuth settings with ${VAR} expanded in clientId, clientSecret and scopes", () =>
    Effect.gen(function*() {
      const loaded = yield* load({
        mcpServers: {
          docs: {
            url: "https://docs.example/mcp",
            auth: { type: "oauth", clientId: "${ID}", clientSecret: "${SECRET}", scopes: ["read", "${EXTRA}"], redirectPort: 8976 }
          }
        }
      }, { ID: "mcpx", SECRET: "s3cret", EXTRA: "write" })
      assert.strictEqual(loaded._tag, "Right")
      const def = loaded._tag === "Right" ? loaded.right.servers[0]?.definition : undefined
      assert.deepStrictEqual(
        def,
        new HttpDefinition({
          transport: "http",
          name: "docs",
          url: "https://docs.example/mcp",
          headers: {},
          auth: new OAuthSettings({ type: "oauth", clientId: "mcpx", clientSecret: "s3cret", scopes: ["read", "write"], redirectPort: 8976 })
        })
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  const refused: ReadonlyArray<readonly [what: string, entry: unknown, path: string, detail: string | RegExp, env?: Record<string, string>]> = [
    ["another type", { url: "https://h/mcp", auth: { type: "basic" } }, "mcpServers.a.auth.type", `expected "oauth", got "basic"`],
    ["an unknown key", { url: "https://h/mcp", auth: { type: "oauth", secret: "x" } }, "mcpServers.a.auth.secret", /^unknown key/],
    [
      "a metadata document URL that is not https",
      { url: "https://h/mcp", auth: { type: "oauth", clientMetadataUrl: "http://x/c.json" } },
      "mcpServers.a.auth.clientMetadataUrl",
      `expected an https:// URL with a path, got "http://x/c.json"`
    ],
    [
      "a bad port",
      { url: "https://h/mcp", auth: { type: "oauth", redirectPort: 70000 } },
      "mcpServers.a.auth.redirectPort",
      "expected a port number from 1 to 65535, got 70000"
    ],
    ["auth on a stdio server", { command: "x", auth: { type: "oauth" } }, "mcpServers.a.auth", "expected no auth on a stdio server (auth goes with url)"],
    [
      "auth beside an Authorization header",
      { url: "https://h/mcp", headers: { authorization: "Bearer x" }, auth: { type: "oauth" } },
      "mcpServers.a.auth",
      "expected either auth or an Authorization header, not both"
    ],
    [
      "an unset variable, the secret's name only",
      { url: "https://h/mcp", auth: { type: "oauth", clientSecret: "${NOPE}" } },
      "mcpServers.a.auth.clientSecret",
      /^environment variable NOPE is not set/
    ]
  ]
  for (const [what, entry, path, detail, env] of refused) {
    it.scoped(`refuses ${what}`, () =>
      Effect.gen(function*() {
        const result = yield* load({ mcpServers: { a: entry } }, env)
        assert.strictEqual(result._tag, "Left")
        if (result._tag !== "Left") return
        assert.strictEqual(result.left._tag, "ConfigError")
        assert.strictEqual(result.left.path, path)
        if (typeof detail === "string") assert.strictEqual(result.left.detail, detail)
        else assert.match(result.left.detail, detail)
      }).pipe(Effect.provide(NodeContext.layer)))
  }

  it.scoped("never shows what a secret expands to", () =>
    Effect.gen(function*() {
      const result = yield* load({ mcpServers: { a: { url: "https://h/mcp", auth: { type: "oauth", clientSecret: "${S}", redirectPort: 0 } } } }, {
        S: "hunter2"
      })
      assert.strictEqual(result._tag, "Left")
      assert.notInclude(JSON.stringify(result), "hunter2")
    }).pipe(Effect.provide(NodeContext.layer)))
})
