/**
 * Tool search's ranking: whole names first, then names that start with the query, words inside
 * names, the namespace and the description; identifiers are split into words; an empty query
 * lists every tool by name; and the index is built once per set of tools, not per search.
 */
import { assert, describe, it } from "@effect/vitest"
import { ranking, type Searchable } from "../src/SearchIndex.js"

const tool = (namespace: string, name: string, description: string): Searchable => ({
  name: `${namespace}__${name}`,
  tool: name,
  namespace,
  description
})

const catalog: ReadonlyArray<Searchable> = [
  tool("github", "create_issue", "Create a new issue in a GitHub repository."),
  tool("github", "list_issues", "List issues in a GitHub repository with filtering options."),
  tool("github", "update_issue", "Update an existing issue in a GitHub repository."),
  tool("github", "create_pull_request", "Create a new pull request in a GitHub repository."),
  tool("github", "listNotifications", "Lists what asks for the authenticated user's attention."),
  tool("alpha", "echo_twice", "Echoes the message back twice."),
  tool("alpha", "echo", "Echoes the message back."),
  tool("alpha", "add", "Adds two numbers."),
  tool("legacy", "echo", "Echo the message"),
  tool("fs", "read_file", "Read the complete contents of a file."),
  tool("slack", "post_message", "Post a new message to a Slack channel")
]

const search = (query: string, limit = 10) => ranking<Searchable>().rank(catalog, query, limit)
const names = (query: string, limit = 10) => search(query, limit).map((h) => h.item.name)

describe("SearchIndex", () => {
  it("puts the tools whose whole name is the query first, and says so", () => {
    const hits = search("echo")
    assert.deepStrictEqual(hits.slice(0, 2).map((h) => h.item.name).sort(), ["alpha__echo", "legacy__echo"])
    assert.deepStrictEqual(hits.slice(0, 2).map((h) => h.best), ["exact", "exact"])
    assert.deepStrictEqual(hits.slice(2).map((h) => [h.item.name, h.best]), [["alpha__echo_twice", "prefix"]])
    assert.deepStrictEqual(names("alpha__echo", 1), ["alpha__echo"])
  })

  it("finds the start of a name, a word inside it, a camelCase word, and a typo in a long word", () => {
    assert.sameMembers(names("ech"), ["alpha__echo", "alpha__echo_twice", "legacy__echo"])
    assert.isTrue(search("ech").every((h) => h.best === "prefix"))
    assert.deepStrictEqual(search("issue").map((h) => [h.item.name, h.best]).sort(), [
      ["github__create_issue", "substring"],
      ["github__list_issues", "substring"],
      ["github__update_issue", "substring"]
    ])
    assert.deepStrictEqual(search("notifications").map((h) => [h.item.name, h.best]), [["github__listNotifications", "substring"]])
    assert.deepStrictEqual(names("notifcations"), ["github__listNotifications"])
  })

  it("ranks a tool matching more of the query's words higher", () => {
    assert.deepStrictEqual(names("create issue", 2), ["github__create_issue", "github__create_pull_request"])
    assert.strictEqual(names("read file")[0], "fs__read_file")
  })

  it("matches the namespace and the description below the name", () => {
    const slack = search("slack")
    assert.deepStrictEqual(slack.map((h) => [h.item.name, h.best]), [["slack__post_message", "prefix"]])
    const numbers = search("numbers")
    assert.deepStrictEqual(numbers.map((h) => [h.item.name, h.best]), [["alpha__add", "description"]])
    const message = search("message")
    assert.strictEqual(message[0]?.item.name, "slack__post_message")
    assert.strictEqual(message[0]?.best, "substring")
    assert.isTrue(message.slice(1).every((h) => h.best === "description"))
  })

  it("lists every tool by name for an empty query, and keeps to the limit; finds nothing for an unknown word", () => {
    assert.deepStrictEqual(names("  ", 3), ["alpha__add", "alpha__echo", "alpha__echo_twice"])
    assert.lengthOf(names(""), 10)
    assert.lengthOf(names("echo", 1), 1)
    assert.deepStrictEqual(names("kubernetes"), [])
    assert.deepStrictEqual(names("echo", 0), [])
  })

  it("builds the index once for the same tools handed again as fresh objects, and again when one changes", () => {
    const r = ranking<Searchable>()
    assert.deepStrictEqual(r.rank(catalog, "echo", 1).map((h) => h.item.name).length, 1)
    const fresh = catalog.map((t) => ({ ...t }))
    const hit = r.rank(fresh, "numbers", 5)
    assert.strictEqual(r.builds(), 1)
    // The hit is the caller's own object, not the one first indexed.
    assert.strictEqual(hit[0]?.item, fresh.find((t) => t.name === "alpha__add"))
    const changed = fresh.map((t) => (t.name === "alpha__add" ? { ...t, description: "Sums two integers." } : t))
    assert.deepStrictEqual(r.rank(changed, "numbers", 5), [])
    assert.strictEqual(r.builds(), 2)
    assert.deepStrictEqual(r.rank(changed.slice(1), "sums", 5).map((h) => h.item.name), ["alpha__add"])
    assert.strictEqual(r.builds(), 3)
  })
})
