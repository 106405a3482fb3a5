import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as oauth from "oauth4webapi"
import { isLoopbackUrl, parseChallenge, resourceMatches, resourceMetadataUrls, serverMetadataUrls } from "../../src/auth/internal/OAuthDiscovery.js"
import { initialScopes, secretMethod, unionScopes } from "../../src/auth/internal/OAuthFlow.js"
import { parseStore } from "../../src/auth/TokenStore.js"

const as = (fields: Partial<oauth.AuthorizationServer>): oauth.AuthorizationServer => ({ issuer: "https://as.example", ...fields })

describe("OAuth discovery order and checks", () => {
  it("protected resource metadata: the challenge's URL alone, else the path-based then the root well-known URI", () => {
    assert.deepStrictEqual(resourceMetadataUrls("https://mcp.example/public/mcp", { resourceMetadata: "https://mcp.example/custom.json" }), [
      "https://mcp.example/custom.json"
    ])
    assert.deepStrictEqual(resourceMetadataUrls("https://mcp.example/public/mcp", {}), [
      "https://mcp.example/.well-known/oauth-protected-resource/public/mcp",
      "https://mcp.example/.well-known/oauth-protected-resource"
    ])
    assert.deepStrictEqual(resourceMetadataUrls("https://mcp.example/", {}), ["https://mcp.example/.well-known/oauth-protected-resource"])
  })

  it("authorization server metadata: RFC 8414 then OpenID, path insertion before OpenID path appending", () => {
    assert.deepStrictEqual(serverMetadataUrls("https://auth.example/tenant1"), [
      "https://auth.example/.well-known/oauth-authorization-server/tenant1",
      "https://auth.example/.well-known/openid-configuration/tenant1",
      "https://auth.example/tenant1/.well-known/openid-configuration"
    ])
    assert.deepStrictEqual(serverMetadataUrls("https://auth.example"), [
      "https://auth.example/.well-known/oauth-authorization-server",
      "https://auth.example/.well-known/openid-configuration"
    ])
  })

  it("a metadata resource must be this server or a parent of its path, on the same origin", () => {
    assert.isTrue(resourceMatches("https://mcp.example/mcp", "https://mcp.example/mcp"))
    assert.isTrue(resourceMatches("https://mcp.example", "https://mcp.example/mcp"))
    assert.isTrue(resourceMatches("HTTPS://MCP.example/mcp/", "https://mcp.example/mcp"))
    assert.isFalse(resourceMatches("https://evil.example/mcp", "https://mcp.example/mcp"))
    assert.isFalse(resourceMatches("https://mcp.example/other", "https://mcp.example/mcp"))
    assert.isFalse(resourceMatches("https://mcp.example/mc", "https://mcp.example/mcp"))
    assert.isFalse(resourceMatches("https://mcp.example/mcp#x", "https://mcp.example/mcp"))
    assert.isFalse(resourceMatches("not a url", "https://mcp.example/mcp"))
  })

  it("plain HTTP only on loopback hosts", () => {
    assert.isTrue(isLoopbackUrl("http://127.0.0.1:9/x"))
    assert.isTrue(isLoopbackUrl("http://localhost/x"))
    assert.isTrue(isLoopbackUrl("http://[::1]:8/"))
    assert.isFalse(isLoopbackUrl("http://auth.example/"))
  })

  it.effect("a Bearer challenge's resource_metadata, scope and error are read, quoted or not", () =>
    Effect.gen(function*() {
      const c = yield* parseChallenge(
        `Basic realm="x", Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://m.example/prm"`
      )
      assert.deepStrictEqual(c, {
        bearer: true,
        error: "insufficient_scope",
        scope: "files:read files:write",
        resourceMetadata: "https://m.example/prm"
      })
      assert.deepStrictEqual(yield* parseChallenge(undefined), {})
      assert.deepStrictEqual(yield* parseChallenge("Bearer error=invalid_token"), { bearer: true, error: "invalid_token" })
      assert.deepStrictEqual(yield* parseChallenge(`Basic realm="api"`), { bearer: false })
    }))
})

describe("OAuth scopes and client authentication", () => {
  it("the challenge's scope first, else the metadata's scopes_supported, else none at all", () => {
    assert.strictEqual(initialScopes({ challenged: "a", resourceScopes: ["b", "c"], configured: undefined, as: as({}) }), "a")
    assert.strictEqual(initialScopes({ challenged: undefined, resourceScopes: ["b", "c"], configured: undefined, as: as({}) }), "b c")
    assert.strictEqual(initialScopes({ challenged: undefined, resourceScopes: undefined, configured: undefined, as: as({}) }), undefined)
    assert.strictEqual(initialScopes({ challenged: "a", resourceScopes: undefined, configured: ["z"], as: as({}), previous: "w" }), "w a z")
  })

  it("offline_access only when the authorization server offers it (and refresh tokens)", () => {
    const offered = as({ scopes_supported: ["mcp", "offline_access"] })
    assert.strictEqual(initialScopes({ challenged: undefined, resourceScopes: ["mcp"], configured: undefined, as: offered }), "mcp offline_access")
    assert.strictEqual(initialScopes({ challenged: undefined, resourceScopes: ["mcp"], configured: undefined, as: as({ scopes_supported: ["mcp"] }) }), "mcp")
    const noRefresh = as({ scopes_supported: ["mcp", "offline_access"], grant_types_supported: ["authorization_code"] })
    assert.strictEqual(initialScopes({ challenged: undefined, resourceScopes: ["mcp"], configured: undefined, as: noRefresh }), "mcp")
    assert.strictEqual(unionScopes(["a", "b"], ["b", "c"]), "a b c")
  })

  it("a client with a secret uses basic unless the server takes only post", () => {
    assert.strictEqual(secretMethod(as({})), "client_secret_basic")
    assert.strictEqual(secretMethod(as({ token_endpoint_auth_methods_supported: ["client_secret_post"] })), "client_secret_post")
    assert.strictEqual(secretMethod(as({ token_endpoint_auth_methods_supported: ["none", "client_secret_basic"] })), "client_secret_basic")
  })
})

describe("TokenStore file", () => {
  it("only a version 1 file of the right shape is read; anything else is damaged, with the reason", () => {
    assert.strictEqual(parseStore(`{"version":1,"servers":{}}`)._tag, "Right")
    const reasons = ["{trunc", `{"version":2,"servers":{}}`, `[]`, `{"version":1,"servers":{"u":{"issuer":3}}}`].map((t) => parseStore(t))
    assert.deepStrictEqual(reasons.map((r) => r._tag), ["Left", "Left", "Left", "Left"])
    assert.include(JSON.stringify(reasons[1]), "version 2")
  })
})
