/**
 * Config edits keep what the user wrote: comments stay on their lines, untouched entries keep
 * their layout (one-line ones too), new lines take the file's indentation, and a plain-JSON file
 * stays plain JSON (no trailing comma left behind).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ConfigEdit from "../src/ConfigEdit.js"

const doc = (text: string) => Either.getOrThrow(ConfigEdit.documentOf("/p/.mcp.json", text))

const original = `{
    // my servers
    "mcpServers": {
        "a": { "command": "x" } // first
    },
    "settings": { "pool.max": 2 }
}
`

const withGh = `{
    // my servers
    "mcpServers": {
        "a": { "command": "x" }, // first
        "gh": {
            "command": "npx",
            "args": [
                "-y",
                "pkg"
            ]
        }
    },
    "settings": { "pool.max": 2 }
}
`

describe("ConfigEdit", () => {
  it.effect("config/edit/add puts the entry on lines of its own in the file's indentation, the comment stays with its line", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* ConfigEdit.addServer(doc(original), "gh", { command: "npx", args: ["-y", "pkg"] }), withGh)
      // A one-line object stays on one line; an empty file becomes a small config.
      assert.strictEqual(
        yield* ConfigEdit.addServer(doc(`{"mcpServers": {"a": {"command": "x"}}}`), "gh", { command: "npx" }),
        `{"mcpServers": {"a": {"command": "x"}, "gh": { "command": "npx" }}}`
      )
      assert.strictEqual(
        yield* ConfigEdit.addServer(doc(""), "gh", { command: "npx" }),
        `{\n  "mcpServers": {\n    "gh": {\n      "command": "npx"\n    }\n  }\n}\n`
      )
      // Trailing commas are the file's style: the new entry gets one too.
      assert.strictEqual(
        yield* ConfigEdit.addServer(doc(`{\n  "mcpServers": {\n    "a": {"command": "x"},\n  },\n}`), "gh", { command: "npx" }),
        `{\n  "mcpServers": {\n    "a": {"command": "x"},\n    "gh": {\n      "command": "npx"\n    },\n  },\n}`
      )
    }))

  it.effect("config/edit/a VS Code file gets the entry under servers, with its type", () =>
    Effect.gen(function*() {
      const text = `{\n\t"servers": {\n\t\t"a": { "type": "stdio", "command": "x" }\n\t}\n}`
      const added = yield* ConfigEdit.addServer(doc(text), "web", { url: "https://example.com/mcp" })
      assert.strictEqual(
        added,
        `{\n\t"servers": {\n\t\t"a": { "type": "stdio", "command": "x" },\n\t\t"web": {\n\t\t\t"type": "http",\n\t\t\t"url": "https://example.com/mcp"\n\t\t}\n\t}\n}`
      )
    }))

  it.effect("config/edit/remove takes the entry's lines and the comma that went with it", () =>
    Effect.gen(function*() {
      const first = yield* ConfigEdit.removeServer(doc(withGh), "a")
      assert.notInclude(first, `"a"`)
      assert.include(first, `"mcpServers": {\n        "gh": {`)
      const last = yield* ConfigEdit.removeServer(doc(withGh), "gh")
      assert.strictEqual(last, original)
      assert.isTrue(Either.isLeft(Either.try(() => JSON.parse(last))), "the original has a comment, so JSON.parse refuses it")
      const plain = yield* ConfigEdit.removeServer(doc(`{\n  "mcpServers": {\n    "a": {"command": "x"},\n    "b": {"command": "y"}\n  }\n}`), "b")
      assert.deepStrictEqual(JSON.parse(plain), { mcpServers: { a: { command: "x" } } })
    }))

  it.effect("config/edit/disable and enable touch only the disabled key, or an override entry of its own", () =>
    Effect.gen(function*() {
      const disabled = yield* ConfigEdit.disableServer(doc(withGh), "a")
      assert.include(disabled, `"a": { "command": "x", "disabled": true }, // first`)
      assert.isTrue(ConfigEdit.disablesHere(doc(disabled), "a"))
      assert.strictEqual(yield* ConfigEdit.enableServer(doc(disabled), "a"), withGh)
      // A server defined farther away is disabled by an entry here that says only that, and enabling drops it.
      const override = yield* ConfigEdit.disableServer(doc(withGh), "far")
      assert.include(override, `"far": {\n            "disabled": true\n        }`)
      assert.strictEqual(yield* ConfigEdit.enableServer(doc(override), "far"), withGh)
    }))

  it.effect("config/edit/an edit that would not read as a config is refused, naming the file", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.flip(ConfigEdit.addServer(doc(original), "x", { command: 3 }))
      assert.strictEqual(bad._tag, "ConfigError")
      assert.include(bad.message, "/p/.mcp.json: mcpServers.x.command")
      const broken = ConfigEdit.documentOf("/p/.mcp.json", `{ "mcpServers": `)
      assert.isTrue(Either.isLeft(broken))
    }))
})
