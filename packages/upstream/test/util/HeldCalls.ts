/** What the in-place Pool tests share: one caller, the error a test cuts a call with, and a tool call. */
import type * as JsonRpc from "@mcpx-fx/protocol/JsonRpc"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import { type Caller, ScopeKey } from "../../src/pool/PoolModel.js"
import type { Session } from "../../src/session/SessionModel.js"

export const caller: Caller = { key: ScopeKey.global }

export class Cut extends Data.TaggedError("Cut")<{ readonly why: string }> {}

/** A call of `name`; one that listens for its notifications asks for progress, which ties them to it. */
export const tool = (s: Session, name: string, onNotification?: (n: JsonRpc.Notification) => Effect.Effect<void>) =>
  onNotification === undefined
    ? s.request("tools/call", { name, arguments: {} }, {})
    : s.request("tools/call", { name, arguments: {}, _meta: { progressToken: name } }, { onNotification })

export const textOf = (result: Record<string, unknown>): string => String((result.content as ReadonlyArray<{ readonly text: string }>)[0]?.text)
