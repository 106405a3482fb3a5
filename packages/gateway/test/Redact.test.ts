import { assert, describe, it } from "@effect/vitest"
import { HttpDefinition, StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import * as Redact from "../src/Redact.js"

const M = Redact.Marker

describe("Redact", () => {
  const r = Redact.forDefinitions([
    StdioDefinition.make({ transport: "stdio", name: "gh", command: "npx", args: [], env: { GITHUB_TOKEN: "ghp_abcdef123456", DEBUG: "1", LEVEL: "info" } }),
    HttpDefinition.make({ transport: "http", name: "docs", url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer docs-token-98765", "X-Api-Key": "k-777777" } })
  ])

  it("takes configured env and header values out of any text, and a header's credential alone", () => {
    assert.strictEqual(r.text("stderr: auth failed for ghp_abcdef123456\n"), `stderr: auth failed for ${M}\n`)
    assert.strictEqual(r.text("401 from docs: token docs-token-98765 expired"), `401 from docs: token ${M} expired`)
    assert.strictEqual(r.text("key k-777777 refused"), `key ${M} refused`)
  })

  it("leaves short configured values alone: they are not told from ordinary words", () => {
    assert.strictEqual(r.text("level info, debug 1"), "level info, debug 1")
  })

  it("hides secret-looking flags in args, joined or separate", () => {
    assert.deepStrictEqual(
      r.args(["serve", "--token=abc", "--api-key", "xyz", "--password", "p", "--verbose", "-v", "--client-secret=s", "API_KEY=q", "plain"]),
      ["serve", `--token=${M}`, "--api-key", M, "--password", M, "--verbose", "-v", `--client-secret=${M}`, `API_KEY=${M}`, "plain"]
    )
    assert.deepStrictEqual(r.args(["--header", "Authorization: Bearer abcdefgh1234"]), ["--header", `Authorization: Bearer ${M}`])
    assert.deepStrictEqual(r.args(["--port", "8080", "--tokenizer", "x"]), ["--port", "8080", "--tokenizer", "x"])
  })

  it("hides what looks like a secret in text, whatever its source", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["exec: node server.js --token=s3cr3t-value --port 1", `exec: node server.js --token=${M} --port 1`],
      ["Authorization: Bearer eyJhbGciOi.abc.def", `Authorization: Bearer ${M}`],
      ["Authorization: Basic dXNlcjpwYXNzMQ==", `Authorization: Basic ${M}`],
      ["Basic authentication required", "Basic authentication required"],
      ["env OPENAI_API_KEY=sk-live-1234 npx", `env OPENAI_API_KEY=${M} npx`],
      [`{"error":"bad","access_token":"abc.def"}`, `{"error":"bad","access_token":"${M}"}`],
      ["GET https://user:hunter2@example.com/x?token=abc&page=2", `GET https://user:${M}@example.com/x?token=${M}&page=2`],
      ["no secrets here: 404 Not Found", "no secrets here: 404 Not Found"]
    ]
    for (const [input, expected] of cases) assert.strictEqual(Redact.make([]).text(input), expected, input)
  })

  it("walks error data for strings", () => {
    assert.deepStrictEqual(r.json({ detail: ["ghp_abcdef123456", 3, { nested: "Bearer zzzzzzzz" }], n: null }), {
      detail: [M, 3, { nested: `Bearer ${M}` }],
      n: null
    })
  })
})
