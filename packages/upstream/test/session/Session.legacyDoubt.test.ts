/**
 * A legacy Streamable HTTP session puts its era in doubt when the server refuses a request as only
 * a server that no longer serves its revision does (-32022, an HTTP error carrying a modern error,
 * a 400 refusing the protocol version), or forgets the session and then refuses `initialize`; the
 * Pool reads the doubt to probe again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ErrorCode from "@mcpx-fx/protocol/ErrorCode"
import * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { makeSession } from "../../src/session/Session.js"
import type { Established, SessionOptions } from "../../src/session/SessionModel.js"
import { RefusedAgain } from "../../src/session/SessionErrors.js"
import { type Connection, HTTPStatusError, SessionExpired, type TransportError } from "../../src/transport/Transport.js"
import { testConnection } from "../util/TestConnection.js"

const legacy: Established = {
  era: "legacy",
  negotiated: "2025-11-25",
  eraSource: "probe",
  serverInfo: undefined,
  capabilities: { tools: {} },
  instructions: undefined
}
const options: SessionOptions = {
  clientInfo: { name: "mcpx-fx-test", version: "0" },
  clientCapabilities: {},
  notificationStreamWait: "0 millis"
}

/** A connection whose every request gets `answer`: an error to fail with, or a JSON-RPC error code to answer. */
const answering = (answer: TransportError | number, wire: Connection["wire"] = "streamable-http") => {
  const request: Connection["request"] = (req) =>
    typeof answer === "number"
      ? Stream.make({ message: JsonRpc.failure(req.id, answer, "refused", { supported: ["2026-07-28"] }), raw: {} })
      : Stream.fail(answer)
  return testConnection(request, { wire })
}

const doubtAfter = (conn: Connection, reinitialize?: Effect.Effect<void, RefusedAgain>) =>
  Effect.gen(function*() {
    const session = yield* makeSession("changed", conn, legacy, options, reinitialize)
    const failure = yield* Effect.flip(session.request("tools/list"))
    return { doubt: yield* session.eraDoubt, failure }
  })

describe("Session, legacy over HTTP: an era in doubt", () => {
  it.scoped("-32022, or an HTTP 400 carrying a modern error, puts the era in doubt", () =>
    Effect.gen(function*() {
      for (
        const conn of [
          answering(ErrorCode.UnsupportedProtocolVersion),
          answering(new HTTPStatusError({ status: 400, body: "{}", rpcError: { code: ErrorCode.UnsupportedProtocolVersion, message: "unsupported" } })),
          answering(new HTTPStatusError({ status: 400, body: "{}", rpcError: { code: ErrorCode.HeaderMismatch, message: "header" } })),
          answering(
            new HTTPStatusError({
              status: 400,
              body: "{}",
              rpcError: { code: -32000, message: "Bad Request: Unsupported protocol version (supported versions: 2026-07-28)" }
            })
          )
        ]
      ) {
        const { doubt } = yield* doubtAfter(conn)
        assert.include(Option.getOrThrow(doubt), "not legacy")
      }
    }))

  it.scoped("a forgotten session whose initialize is refused again puts the era in doubt and ends the session", () =>
    Effect.gen(function*() {
      const { doubt, failure } = yield* doubtAfter(
        answering(new SessionExpired({ sessionId: "s1" })),
        Effect.fail(new RefusedAgain({ reason: "changed refused to initialize again: -32022" }))
      )
      assert.include(Option.getOrThrow(doubt), "forgot session s1")
      assert.strictEqual(failure._tag, "TransportClosed")
    }))

  it.scoped("other errors, and the same answers over stdio, leave the era alone", () =>
    Effect.gen(function*() {
      for (
        const conn of [
          answering(ErrorCode.MissingRequiredClientCapability),
          answering(ErrorCode.MethodNotFound),
          answering(new HTTPStatusError({ status: 400, body: "" })),
          answering(new HTTPStatusError({ status: 400, body: "{}", rpcError: { code: -32000, message: "Bad Request: No valid session ID" } })),
          answering(new HTTPStatusError({ status: 503, body: "" })),
          answering(ErrorCode.UnsupportedProtocolVersion, "stdio")
        ]
      ) {
        assert.isTrue(Option.isNone((yield* doubtAfter(conn)).doubt))
      }
    }))
})
