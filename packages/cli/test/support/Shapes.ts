/**
 * What each revision can carry, as the specification's schemas say, for checking that a result
 * reached a host in its own revision's shape: audio arrived in 2025-03-26; resource links,
 * structured tool output and output schemas in 2025-06-18; `resultType`, caching hints and the
 * server identity in `_meta` belong to 2026-07-28 alone.
 */
import { assert } from "@effect/vitest"
import { content, result } from "./Replies.js"
import type { Revision } from "./Revisions.js"
import type { Message } from "./StdioServe.js"

const since = (revision: Revision, first: Revision) => revision >= first

/** The era-server `structured` tool's reply, as `revision` must receive it. */
export const assertStructuredCall = (revision: Revision, reply: Message): void => {
  const r = result(reply)
  const types = content(reply).map((b) => b.type)
  const expected = since(revision, "2025-06-18")
    ? ["text", "resource_link", "audio"]
    : since(revision, "2025-03-26")
    ? ["text", "text", "audio"]
    : ["text", "text", "text"]
  assert.deepStrictEqual(types, expected, JSON.stringify(reply))
  if (since(revision, "2025-06-18")) {
    assert.isObject(r.structuredContent, JSON.stringify(reply))
    assert.deepStrictEqual((r.structuredContent as Message).items, [1, 2, 3])
  } else {
    assert.notProperty(r, "structuredContent")
  }
  assertEnvelope(revision, r, false)
}

/** A result's envelope: the modern fields for 2026-07-28 and none of them for a legacy host. */
export const assertEnvelope = (revision: Revision, r: Readonly<Record<string, unknown>>, cacheable: boolean): void => {
  const serverInfo = (r._meta as Message | undefined)?.["io.modelcontextprotocol/serverInfo"]
  if (revision === "2026-07-28") {
    assert.strictEqual(r.resultType, "complete", JSON.stringify(r))
    assert.isObject(serverInfo, JSON.stringify(r))
    if (cacheable) {
      assert.isNumber(r.ttlMs, JSON.stringify(r))
      assert.isAtLeast(r.ttlMs as number, 0)
      assert.include(["public", "private"], r.cacheScope, JSON.stringify(r))
    }
  } else {
    for (const key of ["resultType", "ttlMs", "cacheScope"]) assert.notProperty(r, key, JSON.stringify(r))
    assert.isUndefined(serverInfo, JSON.stringify(r))
  }
}

/** A `tools/list` reply over era-server tools, as `revision` must receive it. */
export const assertToolsList = (revision: Revision, reply: Message, namespace: string): void => {
  const r = result(reply)
  assert.isArray(r.tools, JSON.stringify(reply))
  const tools = r.tools as ReadonlyArray<Message>
  const tool = (name: string) => {
    const t = tools.find((x) => x.name === `${namespace}__${name}`)
    assert.isObject(t, `${namespace}__${name} in ${JSON.stringify(reply)}`)
    return t as Message
  }
  if (since(revision, "2025-03-26")) assert.property(tool("echo"), "annotations")
  else assert.notProperty(tool("echo"), "annotations")
  if (since(revision, "2025-06-18")) assert.property(tool("structured"), "outputSchema")
  else assert.notProperty(tool("structured"), "outputSchema")
  assertEnvelope(revision, r, true)
}
