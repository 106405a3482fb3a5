import { assert, describe, it } from "@effect/vitest"
import { HttpDefinition, StdioDefinition } from "@mcpx-fx/upstream/ServerDefinition"
import * as Redact from "../src/Redact.js"

const M = Redact.Marker

describe("Redact", () => {
  const r = Redact.forDefinitions([
    StdioDefinition.make({ transport: "stdio", name: "gh", command: "npx", args: [], env: { GITHUB_TOKEN: "ghp_abcdef123456", DEBUG: "1", LEVEL: "info" } }),
    HttpDefinition.make({
      transport: "http",
      name: "docs",
      url: "https://docs.example.com/mcp",
      headers: { Authorization: "Bearer docs-token-98765", "X-Api-Key": "k-777777" }
    })
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

  it("takes a configured secret out however it was re-encoded: JSON-escaped, percent-encoded, base64, over lines", () => {
    const secret = "s3cr3t/\"quoted\" key+42"
    const q = Redact.forDefinitions([StdioDefinition.make({ transport: "stdio", name: "q", command: "x", args: [], env: { API: secret } })])
    const leaks = [
      JSON.stringify({ echoed: secret }),
      `GET /search?q=${encodeURIComponent(secret)}`,
      `form: q=${encodeURIComponent(secret).replace(/%20/g, "+")}`,
      `Authorization: Token ${Buffer.from(secret).toString("base64")}`,
      // Inside a longer encoding, at each alignment (a Basic credential is user:secret).
      ...["u:", "us:", "use:"].map((user) => `header ${Buffer.from(user + secret + "!").toString("base64")}`),
      `base64url ${Buffer.from(secret).toString("base64url")}`,
      `wrapped: ${secret.slice(0, 9)}\n    ${secret.slice(9)}`,
      `{"log":"${JSON.stringify(secret.slice(0, 5)).slice(1, -1)}\\n${JSON.stringify(secret.slice(5)).slice(1, -1)}"}`
    ]
    for (const leak of leaks) {
      const out = q.text(leak)
      assert.include(out, M, leak)
      assert.notInclude(out, "key+42", leak)
      assert.notInclude(out, "s3cr3t", leak)
      for (const form of [Buffer.from(secret).toString("base64").slice(4, 16)]) assert.notInclude(out, form, leak)
    }
    assert.strictEqual(q.text("nothing of it here"), "nothing of it here")
  })

  it("takes key-like segments out of URL paths, and leaves ordinary paths alone", () => {
    const none = Redact.make([])
    assert.strictEqual(
      none.text("POST https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage failed"),
      `POST https://api.telegram.org/${M}/sendMessage failed`
    )
    assert.strictEqual(
      none.text("webhook https://hooks.example.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX1 said 403"),
      `webhook https://hooks.example.com/services/T00000000/B00000000/${M} said 403`
    )
    for (
      const plain of ["http://127.0.0.1:7717/mcp", "https://docs.example.com/v1/tools/list?page=2", "https://example.com/articles/how-to-configure-servers"]
    ) {
      assert.strictEqual(none.text(`GET ${plain}`), `GET ${plain}`)
    }
  })
})
