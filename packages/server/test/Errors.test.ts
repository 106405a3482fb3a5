import { assert, describe, it } from "@effect/vitest"
import * as HttpStatus from "@mcpx-fx/protocol/HttpStatus"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Meta from "@mcpx-fx/protocol/Meta"
import type * as Revision from "@mcpx-fx/protocol/Revision"
import { BackendUnavailable, CallTimedOut, CapabilityRequired, UnknownName, UpstreamError } from "../src/Backend.js"
import * as Server from "../src/Server.js"

const cases: ReadonlyArray<readonly [string, Server.HandleError, Revision.Era, number, number]> = [
  ["unknown-tool", new UnknownName({ kind: "tool", name: "x", suggestions: [] }), "modern", -32602, 400],
  ["unknown-tool", new UnknownName({ kind: "tool", name: "x", suggestions: [] }), "legacy", -32602, 400],
  ["unknown-resource", new UnknownName({ kind: "resource", name: "u", suggestions: [] }), "modern", -32602, 400],
  ["unknown-resource", new UnknownName({ kind: "resource", name: "u", suggestions: [] }), "legacy", -32002, 404],
  ["upstream-code", new UpstreamError({ server: "s", method: "m", code: -31000, rpcMessage: "m" }), "modern", -31000, 200],
  ["upstream-32002", new UpstreamError({ server: "s", method: "m", code: -32002, rpcMessage: "m" }), "modern", -32602, 400],
  ["upstream-32002", new UpstreamError({ server: "s", method: "m", code: -32002, rpcMessage: "m" }), "legacy", -32002, 404],
  ["timeout", new CallTimedOut({ server: "s", method: "m", timeoutMs: 1 }), "modern", -32603, 500],
  ["unavailable", new BackendUnavailable({ reason: "r" }), "modern", -32603, 500],
  ["capability", new CapabilityRequired({ requiredCapabilities: { sampling: {} } }), "modern", -32021, 400],
  ["capability", new CapabilityRequired({ requiredCapabilities: { sampling: {} } }), "legacy", -32603, 500],
  ["meta-missing", new Meta.InvalidRequestMeta({ problems: [{ field: "_meta", problem: "missing", detail: "" }] }), "modern", -32602, 400],
  ["unsupported-version", new Meta.UnsupportedProtocolVersion({ supported: ["2026-07-28"], requested: "x" }), "modern", -32022, 400],
  ["method-not-found", new Server.MethodNotFound({ method: "m", detail: "d" }), "modern", -32601, 404],
  ["invalid-params", new Server.InvalidParams({ detail: "d" }), "modern", -32602, 400],
  ["already-initialized", new Server.AlreadyInitialized({ revision: "2025-11-25" }), "legacy", -32600, 400],
  ["unshapeable", new Server.UnshapeableResult({ detail: "d" }), "legacy", -32603, 500]
]

describe("errorObject", () => {
  for (const [name, error, era, code, status] of cases) {
    const revision = era === "modern" ? "2026-07-28" : "2025-11-25"
    it(`${revision}/errors/${name}-is-${code}-and-http-${status}`, () => {
      const e = Server.errorObject(error, era)
      assert.strictEqual(e.code, code)
      assert.isNotEmpty(e.message)
      // The HTTP status a transport would send follows from the code alone.
      assert.strictEqual(HttpStatus.modernStatus(JsonRpc.failure(1, e.code, e.message, e.data)), status)
    })
  }
})
