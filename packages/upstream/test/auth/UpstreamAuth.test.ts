import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { type AuthServer, type AuthServerOptions, startAuthServer } from "@mcpx-fx/testing/oauth/AuthServer"
import { autoApprove } from "@mcpx-fx/testing/oauth/AutoApprove"
import { type ProtectedServerOptions, startProtectedServer } from "@mcpx-fx/testing/oauth/ProtectedServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Prober } from "../../src/era/Prober.js"
import { HttpDefinition, OAuthSettings } from "../../src/ServerDefinition.js"
import { FileName, parseStore, TokenStore } from "../../src/auth/TokenStore.js"
import * as TransportLayer from "../../src/transport/TransportLayer.js"
import { ProcessGroups } from "../../src/os/ProcessGroups.js"
import type { Authorizer } from "../../src/auth/AuthModel.js"
import { UpstreamAuth } from "../../src/auth/UpstreamAuth.js"

const authServer = (options?: AuthServerOptions) =>
  Effect.acquireRelease(Effect.promise(() => startAuthServer(options)), (s) => Effect.promise(() => s.close()))

const protectedServer = (as: AuthServer, options?: ProtectedServerOptions) =>
  Effect.acquireRelease(Effect.promise(() => startProtectedServer(as, options)), (s) => Effect.promise(() => s.close()))

/** The upstream engine over a token store in `stateDir`, with or without someone to log in. */
const engine = (stateDir: string, authorizer?: Authorizer) => {
  const auth = UpstreamAuth.layer(authorizer === undefined ? {} : { authorizer }).pipe(
    Layer.provide(TokenStore.layerFile(stateDir)),
    Layer.provide(NodeContext.layer)
  )
  const prober = Prober.layer.pipe(
    Layer.provide(Layer.mergeAll(TransportLayer.layer(), EraCache.layerMemory, Negotiator.layer)),
    Layer.provide(Layer.mergeAll(FetchHttpClient.layer, NodeContext.layer, auth, ProcessGroups.layerNone))
  )
  return Layer.merge(prober, auth)
}

const definition = (url: string, auth?: OAuthSettings) => new HttpDefinition({ transport: "http", name: "docs", url, ...(auth === undefined ? {} : { auth }) })

const options = {
  preference: "prefer-discover",
  probeTimeout: "5 seconds",
  session: { clientInfo: { name: "test", version: "1" }, clientCapabilities: {} }
} as const

/** Starts the server through the Prober and calls a tool: what any gateway call does. */
const callTool = (def: HttpDefinition, tool: string) =>
  Effect.scoped(Effect.gen(function*() {
    const { session } = yield* (yield* Prober).start(def, options)
    const result = yield* session.request("tools/call", { name: tool, arguments: {} })
    return JSON.stringify(result.content)
  }))

const kinds = (as: AuthServer, kind: string) => as.events.filter((e) => e.kind === kind)
const grants = (as: AuthServer, grantType: string) => as.events.filter((e) => e.kind === "token" && e.grantType === grantType && e.ok)

const tempDir = Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "mcpx-auth-" }))

/** An authorization server, a protected server behind it, an empty token store and the server's definition. */
const fixture = (servers: { readonly as?: AuthServerOptions; readonly rs?: ProtectedServerOptions } = {}) =>
  Effect.gen(function*() {
    const as = yield* authServer(servers.as)
    const rs = yield* protectedServer(as, servers.rs)
    const dir = yield* tempDir
    return { as, rs, dir, def: definition(rs.url) }
  })

/** The same after a first call that logged in, with someone there to approve it. */
const loggedIn = (servers: { readonly as?: AuthServerOptions; readonly rs?: ProtectedServerOptions } = {}) =>
  Effect.tap(fixture(servers), ({ def, dir }) => callTool(def, "whoami").pipe(Effect.provide(engine(dir, autoApprove))))

const readStore = (dir: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(`${dir}/${FileName}`)).pipe(
    Effect.map((text) => parseStore(text))
  )

describe("UpstreamAuth against a local authorization server", () => {
  it.scoped("a first call logs in (metadata, registration, PKCE code flow with the resource) and later ones reuse the stored token", () =>
    Effect.gen(function*() {
      const { as, def, dir, rs } = yield* fixture()
      const first = yield* callTool(def, "whoami").pipe(Effect.provide(engine(dir, autoApprove)))
      assert.include(first, "hello, authorized caller")
      assert.strictEqual(kinds(as, "register").length, 1)
      const authorize = kinds(as, "authorize")
      assert.strictEqual(authorize.length, 1)
      assert.deepStrictEqual(authorize[0], {
        kind: "authorize",
        clientId: (kinds(as, "register")[0] as { clientId: string }).clientId,
        scope: undefined,
        resource: rs.url
      })
      // A new process (a new layer on the same state directory), and nobody to log in: the stored token does.
      const again = yield* callTool(def, "whoami").pipe(Effect.provide(engine(dir)))
      assert.include(again, "hello")
      assert.strictEqual(kinds(as, "authorize").length, 1)
      const stored = yield* readStore(dir)
      assert.isTrue(stored._tag === "Right" && stored.right.get(rs.url)?.issuer === as.issuer)
      const mode = (yield* (yield* FileSystem.FileSystem).stat(`${dir}/${FileName}`)).mode & 0o777
      assert.strictEqual(mode, 0o600)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("without a login the call fails with AuthorizationRequired naming `auth login`, and status says needs-login", () =>
    Effect.gen(function*() {
      const { as, def, dir } = yield* fixture()
      const failure = yield* Effect.flip(callTool(def, "whoami").pipe(Effect.provide(engine(dir))))
      assert.strictEqual(failure._tag, "AuthorizationRequired")
      assert.include(failure.message, "mcpx-fx auth login docs")
      assert.strictEqual(kinds(as, "authorize").length, 0)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("an expired access token is refreshed before the call, and the rotated refresh token is stored", () =>
    Effect.gen(function*() {
      const { as, def, dir, rs } = yield* loggedIn({ as: { tokenLifetimeSeconds: 600 } })
      const before = yield* readStore(dir)
      yield* TestClock.adjust("11 minutes")
      const text = yield* callTool(def, "whoami").pipe(Effect.provide(engine(dir)))
      assert.include(text, "hello")
      assert.strictEqual(grants(as, "refresh_token").length, 1)
      assert.strictEqual(rs.refusals.unauthorized, 1, "only the first, tokenless request was refused")
      const after = yield* readStore(dir)
      const refreshOf = (s: typeof before) => (s._tag === "Right" ? s.right.get(rs.url)?.tokens?.refresh_token : undefined)
      assert.isDefined(refreshOf(after))
      assert.notStrictEqual(refreshOf(after), refreshOf(before))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a token the server stops accepting is refreshed on its 401, once, and the request is sent again", () =>
    Effect.gen(function*() {
      const { as, def, dir } = yield* loggedIn()
      as.invalidateAccessTokens()
      const text = yield* callTool(def, "whoami").pipe(Effect.provide(engine(dir)))
      assert.include(text, "hello")
      assert.strictEqual(grants(as, "refresh_token").length, 1)
      assert.strictEqual(kinds(as, "authorize").length, 1)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a revoked refresh token means a new login: AuthorizationRequired for the daemon, a new authorization for a login", () =>
    Effect.gen(function*() {
      const { as, def, dir } = yield* loggedIn()
      as.invalidateAccessTokens()
      as.revokeRefreshTokens()
      const failure = yield* Effect.flip(callTool(def, "whoami").pipe(Effect.provide(engine(dir))))
      assert.strictEqual(failure._tag, "AuthorizationRequired")
      const status = yield* Effect.flatMap(UpstreamAuth, (a) => a.status(def)).pipe(Effect.provide(engine(dir)))
      assert.strictEqual(status.state, "needs-login")
      const login = yield* Effect.flatMap(UpstreamAuth, (a) => a.login(def, autoApprove)).pipe(Effect.provide(engine(dir)))
      assert.strictEqual(login.state, "valid")
      assert.strictEqual(kinds(as, "authorize").length, 2)
      assert.include(yield* callTool(def, "whoami").pipe(Effect.provide(engine(dir))), "hello")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a 403 insufficient_scope steps up to the union of the scopes, and a daemon remembers them for the login", () =>
    Effect.gen(function*() {
      const { as, def, dir } = yield* loggedIn({ rs: { scopesSupported: ["notes:read"], toolScopes: { write_note: "notes:write" } } })
      // The daemon cannot step up; it says which scopes the login must ask for.
      const failure = yield* Effect.flip(callTool(def, "write_note").pipe(Effect.provide(engine(dir))))
      assert.strictEqual(failure._tag, "AuthorizationRequired")
      assert.isTrue(failure._tag === "AuthorizationRequired" && failure.scope === "notes:read notes:write")
      yield* Effect.flatMap(UpstreamAuth, (a) => a.login(def, autoApprove)).pipe(Effect.provide(engine(dir)))
      const scopes = kinds(as, "authorize").map((e) => (e as { scope?: string }).scope)
      assert.deepStrictEqual(scopes, ["notes:read", "notes:read notes:write"])
      assert.include(yield* callTool(def, "write_note").pipe(Effect.provide(engine(dir))), "note written")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("with someone to log in, step-up happens within the call; a server never satisfied is not asked again for nothing new", () =>
    Effect.gen(function*() {
      const as = yield* authServer()
      const rs = yield* protectedServer(as, { scopesSupported: ["notes:read"], toolScopes: { write_note: "notes:write" } })
      const dir = yield* tempDir
      const text = yield* callTool(definition(rs.url), "write_note").pipe(Effect.provide(engine(dir, autoApprove)))
      assert.include(text, "note written")
      assert.strictEqual(kinds(as, "authorize").length, 2)
      // A server that wants a scope its authorization server never grants.
      const stingyAs = yield* authServer({ grantable: ["notes:read"] })
      const stingy = yield* protectedServer(stingyAs, { toolScopes: { write_note: "admin" } })
      const failure = yield* Effect.flip(callTool(definition(stingy.url), "write_note").pipe(Effect.provide(engine(dir, autoApprove))))
      assert.strictEqual(failure._tag, "AuthorizationFailed")
      assert.include(failure.message, "insufficient_scope")
      assert.strictEqual(kinds(stingyAs, "authorize").length, 2, "the first login and one step-up, no more")
      assert.strictEqual(stingy.refusals.forbidden, 2)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a server whose metadata moves to another authorization server gets a registration there, and no old credential travels", () =>
    Effect.gen(function*() {
      const as1 = yield* authServer()
      const as2 = yield* authServer()
      const rs = yield* protectedServer(as1)
      const dir = yield* tempDir
      const def = definition(rs.url)
      yield* callTool(def, "whoami").pipe(Effect.provide(engine(dir, autoApprove)))
      const oldClient = (kinds(as1, "register")[0] as { clientId: string }).clientId
      rs.moveTo(as2)
      const text = yield* callTool(def, "whoami").pipe(Effect.provide(engine(dir, autoApprove)))
      assert.include(text, "hello")
      assert.strictEqual(kinds(as2, "register").length, 1)
      const seenAtAs2 = as2.events.flatMap((e) => ("clientId" in e ? [e.clientId] : []))
      assert.notInclude(seenAtAs2, oldClient)
      const stored = yield* readStore(dir)
      assert.isTrue(stored._tag === "Right" && stored.right.get(rs.url)?.issuer === as2.issuer)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a damaged token file reads as empty: the call asks for a login and says why, and the login rewrites the file", () =>
    Effect.gen(function*() {
      const as = yield* authServer()
      const rs = yield* protectedServer(as)
      const dir = yield* tempDir
      const fs = yield* FileSystem.FileSystem
      yield* fs.writeFileString(`${dir}/${FileName}`, "{ \"version\": 1, \"servers\": { trunc")
      const def = definition(rs.url)
      const failure = yield* Effect.flip(callTool(def, "whoami").pipe(Effect.provide(engine(dir))))
      assert.strictEqual(failure._tag, "AuthorizationRequired")
      assert.include(failure.message, "damaged")
      yield* Effect.flatMap(UpstreamAuth, (a) => a.login(def, autoApprove)).pipe(Effect.provide(engine(dir)))
      assert.strictEqual((yield* readStore(dir))._tag, "Right")
      // Something that is not a regular file is not read at all.
      const other = yield* tempDir
      yield* fs.makeDirectory(`${other}/${FileName}`)
      const status = yield* Effect.flatMap(UpstreamAuth, (a) => a.status(def)).pipe(Effect.provide(engine(other)))
      assert.strictEqual(status.state, "needs-login")
      assert.include(status.reason ?? "", "not a regular file")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a pre-registered client from the config is used as it is, without registering", () =>
    Effect.gen(function*() {
      const as = yield* authServer()
      const rs = yield* protectedServer(as)
      const dir = yield* tempDir
      // The test server only knows clients that registered, so register one the way an operator would.
      const registered = yield* Effect.promise(() =>
        fetch(`${as.issuer}/register`, { method: "POST", body: JSON.stringify({ redirect_uris: ["http://127.0.0.1/callback"] }) })
          .then((r) => r.json() as Promise<{ client_id: string }>)
      )
      const def = definition(rs.url, new OAuthSettings({ type: "oauth", clientId: registered.client_id }))
      yield* callTool(def, "whoami").pipe(Effect.provide(engine(dir, autoApprove)))
      assert.strictEqual(kinds(as, "register").length, 1, "only the operator's registration")
      assert.strictEqual((kinds(as, "authorize")[0] as { clientId: string }).clientId, registered.client_id)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a 401 with no Bearer challenge from a server not configured for OAuth stays that server's HTTP error", () =>
    Effect.gen(function*() {
      const url = yield* Effect.acquireRelease(
        Effect.async<{ readonly url: string; readonly close: () => void }>((resume) => {
          const server = createServer((_req, res) => res.writeHead(401, { "www-authenticate": `Basic realm="api"` }).end("no"))
          server.listen(0, "127.0.0.1", () =>
            resume(Effect.succeed({
              url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
              close: () => server.close()
            })))
        }),
        (s) => Effect.sync(s.close)
      )
      const dir = yield* tempDir
      const failure = yield* Effect.flip(callTool(definition(url.url), "whoami").pipe(Effect.provide(engine(dir))))
      assert.strictEqual(failure._tag, "HTTPStatusError")
    }).pipe(Effect.provide(NodeContext.layer)))
})
