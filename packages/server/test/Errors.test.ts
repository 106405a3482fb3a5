import { assert, describe, it } from "@effect/vitest"
import * as HttpStatus from "@mcpx-fx/protocol/HttpStatus"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import { BackendUnavailable, CallTimedOut, CapabilityRequired, UnknownName, UpstreamError } from "../src/Backend.js"
import * as ServerErrors from "../src/ServerErrors.js"

const cases: ReadonlyArray<readonly [string, ServerErrors.HandleError, Revision.Era, number, number]> = [
  ["unknown-tool", new UnknownName({ kind: "tool", name: "x", suggestions: [] }), "modern", -32602, 400],
  ["unknown-tool", new UnknownName({ kind: "tool", name: "x", suggestions: [] }), "legacy", -32602, 400],
  ["unknown-resource", new UnknownName({ kind: "resource", name: "u", suggestions: [] }), "modern", -32602, 400],
  ["unknown-resource", new UnknownName({ kind: "resource", name: "u", suggestions: [] }), "legacy", -32002, 200],
  ["upstream-code", new UpstreamError({ server: "s", method: "m", code: -31000, rpcMessage: "m" }), "modern", -31000, 200],
  ["upstream-32002", new UpstreamError({ server: "s", method: "m", code: -32002, rpcMessage: "m" }), "modern", -32602, 400],
  ["upstream-32002", new UpstreamError({ server: "s", method: "m", code: -32002, rpcMessage: "m" }), "legacy", -32002, 200],
  // Codes about mcpx-fx's own request upstream never reach a host as if they were about its own.
  ["upstream-32020", new UpstreamError({ server: "s", method: "m", code: -32020, rpcMessage: "m" }), "modern", -32603, 200],
  ["upstream-32021", new UpstreamError({ server: "s", method: "m", code: -32021, rpcMessage: "m" }), "modern", -32603, 200],
  // …unless it names the capabilities mcpx-fx passed on for the host: mcpx-fx says so itself.
  [
    "upstream-32021-required",
    new UpstreamError({ server: "s", method: "m", code: -32021, rpcMessage: "m", data: { requiredCapabilities: { elicitation: {} } } }),
    "modern",
    -32021,
    400
  ],
  [
    "upstream-32021-required",
    new UpstreamError({ server: "s", method: "m", code: -32021, rpcMessage: "m", data: { requiredCapabilities: { elicitation: {} } } }),
    "legacy",
    -32603,
    200
  ],
  ["upstream-32022", new UpstreamError({ server: "s", method: "m", code: -32022, rpcMessage: "m" }), "modern", -32603, 200],
  ["upstream-32022", new UpstreamError({ server: "s", method: "m", code: -32022, rpcMessage: "m" }), "legacy", -32603, 200],
  ["upstream-32042", new UpstreamError({ server: "s", method: "m", code: -32042, rpcMessage: "m" }), "modern", -32603, 200],
  ["upstream-32042", new UpstreamError({ server: "s", method: "m", code: -32042, rpcMessage: "m" }), "legacy", -32042, 200],
  ["timeout", new CallTimedOut({ server: "s", method: "m", timeoutMs: 1 }), "modern", -32603, 200],
  ["unavailable", new BackendUnavailable({ reason: "r" }), "modern", -32603, 200],
  ["capability", new CapabilityRequired({ requiredCapabilities: { sampling: {} } }), "modern", -32021, 400],
  ["capability", new CapabilityRequired({ requiredCapabilities: { sampling: {} } }), "legacy", -32603, 200],
  ["meta-missing", new Meta.InvalidRequestMeta({ problems: [{ field: "_meta", problem: "missing", detail: "" }] }), "modern", -32602, 400],
  ["unsupported-version", new Meta.UnsupportedProtocolVersion({ supported: ["2026-07-28"], requested: "x" }), "modern", -32022, 400],
  ["method-not-found", new ServerErrors.MethodNotFound({ method: "m", detail: "d" }), "modern", -32601, 404],
  ["invalid-params", new ServerErrors.InvalidParams({ detail: "d" }), "modern", -32602, 400],
  ["already-initialized", new ServerErrors.AlreadyInitialized({ revision: "2025-11-25" }), "legacy", -32600, 400],
  ["unshapeable", new ServerErrors.UnshapeableResult({ detail: "d" }), "legacy", -32603, 200]
]

describe("errorObject", () => {
  it("2026-07-28/errors/a reserved upstream code names the upstream and keeps what it said under data", () => {
    const e = ServerErrors.errorObject(
      new UpstreamError({ server: "gh", method: "tools/call", code: -32022, rpcMessage: "no", data: { supported: ["x"] } }),
      "modern"
    )
    assert.include(e.message, "upstream gh answered tools/call with error -32022: no")
    assert.deepStrictEqual(e.data, {
      reason: "upstream-error",
      server: "gh",
      method: "tools/call",
      upstream: { code: -32022, message: "no", data: { supported: ["x"] } }
    })
  })

  for (const [name, error, era, code, status] of cases) {
    const revision = era === "modern" ? "2026-07-28" : "2025-11-25"
    it(`${revision}/errors/${name}-is-${code}-and-http-${status}`, () => {
      const e = ServerErrors.errorObject(error, era)
      assert.strictEqual(e.code, code)
      assert.isNotEmpty(e.message)
      // The HTTP status a transport would send follows from the code alone.
      assert.strictEqual(HttpStatus.modernStatus(JsonRpc.failure(1, e.code, e.message, e.data)), status)
    })
  }
})
