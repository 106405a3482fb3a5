/**
 * The ranking behind tool search: a MiniSearch full-text index (BM25, prefix and fuzzy matching)
 * over each tool's names, namespace and description.
 *
 * Tool names are identifiers (`create_issue`, `listIssues`, `github__get_me`), so they are split
 * into words at punctuation and at lower-to-upper case changes, and the whole name is kept as one
 * more term: a query of the exact name then outranks one that only shares words with it.
 *
 * The catalog changes rarely and is searched often, so an index is built once per set of tools
 * and reused until that set changes (`ranking`).
 */
import MiniSearch, { type SearchResult } from "minisearch"

/** A tool as search sees it: the name hosts call, the upstream's own name, where it lives, what it does. */
export interface Searchable {
  readonly name: string
  readonly tool: string
  readonly namespace: string
  readonly description: string
}

/** How a hit matched at best, best first: the whole name, the start of a name, a word inside a name, the namespace, the description. */
export const MatchKinds = ["exact", "prefix", "substring", "namespace", "description"] as const
export type MatchKind = (typeof MatchKinds)[number]

/** A search hit. */
export interface Ranked<A extends Searchable> {
  readonly item: A
  readonly score: number
  readonly best: MatchKind
}

// A hit by the tool's position in the indexed list, so an index can answer for equal lists.
interface Hit {
  readonly at: number
  readonly score: number
  readonly best: MatchKind
}

interface Index {
  readonly items: ReadonlyArray<Searchable>
  readonly find: (query: string, limit: number) => ReadonlyArray<Hit>
}

type Field = "name" | "tool" | "namespace" | "description"
const fields: ReadonlyArray<Field> = ["name", "tool", "namespace", "description"]

// A name's words: `listIssues` and `list_issues` are both "list" and "issues".
const words = (text: string): Array<string> => text.replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2").split(/[^\p{L}\p{N}]+/u).filter((w) => w !== "")

const withWhole = (text: string, parts: ReadonlyArray<string>): Array<string> => parts.length === 1 && parts[0] === text ? [text] : [text, ...parts]

// The host-facing name is only kept whole: its words are the namespace's and the tool's, which
// have their own fields, and counting them twice would rank a namespace word like a tool word.
const tokenizeField = (text: string, field?: string): Array<string> =>
  field === "name" ? (text === "" ? [] : [text]) : field === "tool" ? withWhole(text, words(text)) : words(text)

// A query is whitespace-separated terms, each looked up whole and by its words.
const tokenizeQuery = (query: string): Array<string> => query.split(/\s+/).filter((t) => t !== "").flatMap((t) => withWhole(t, words(t)))

/** How one hit matched at best, from the terms MiniSearch says it matched and in which fields. */
const bestOf = (item: Searchable, result: SearchResult): MatchKind => {
  const names = [item.name.toLowerCase(), item.tool.toLowerCase()]
  const queried = new Set(result.queryTerms)
  let best: number = MatchKinds.length - 1
  for (const [term, where] of Object.entries(result.match)) {
    const kind: MatchKind = where.includes("name") || where.includes("tool")
      ? names.includes(term) && queried.has(term)
        ? "exact"
        : names.some((n) => n.startsWith(term)) && result.queryTerms.some((q) => term.startsWith(q))
        ? "prefix"
        : "substring"
      : where.includes("namespace")
      ? "namespace"
      : "description"
    best = Math.min(best, MatchKinds.indexOf(kind))
  }
  return MatchKinds[best] ?? "description"
}

const ExactBoost = 3

const build = (items: ReadonlyArray<Searchable>): Index => {
  const index = new MiniSearch<{ readonly id: number } & Searchable>({
    fields: [...fields],
    tokenize: tokenizeField,
    searchOptions: {
      tokenize: tokenizeQuery,
      // A name outweighs its namespace, which outweighs the prose of a description.
      boost: { name: 3, tool: 3, namespace: 1.5, description: 1 },
      prefix: true,
      // One typo in a word of five letters or more ("notifcations"), two from ten; shorter words must be spelt right.
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false)
    }
  })
  index.addAll(items.map((item, id) => ({ id, name: item.name, tool: item.tool, namespace: item.namespace, description: item.description })))
  const byName: ReadonlyArray<Hit> = items
    .map((item, at) => ({ item, at }))
    .sort((a, b) => a.item.name.localeCompare(b.item.name))
    .map(({ at }) => ({ at, score: 0, best: "exact" }))
  return {
    items,
    find: (query, limit) => {
      const terms = new Set(tokenizeQuery(query).map((t) => t.toLowerCase()))
      if (terms.size === 0) return byName.slice(0, limit)
      // A term that is a tool's whole name weighs more, so `echo` puts `echo` before `echo_twice`.
      const boostDocument = (id: unknown, term: string) => {
        const item = items[Number(id)]
        return terms.has(term) && item !== undefined && (item.tool.toLowerCase() === term || item.name.toLowerCase() === term)
          ? ExactBoost
          : 1
      }
      return index.search(query, { boostDocument }).slice(0, limit).flatMap((result) => {
        const at = Number(result.id)
        const item = items[at]
        return item === undefined ? [] : [{ at, score: result.score, best: bestOf(item, result) }]
      })
    }
  }
}

const sameFields = (a: Searchable, b: Searchable) => a.name === b.name && a.tool === b.tool && a.namespace === b.namespace && a.description === b.description

const sameItems = (a: ReadonlyArray<Searchable>, b: ReadonlyArray<Searchable>) =>
  a.length === b.length && a.every((x, i) => {
    const y = b[i]
    return y !== undefined && sameFields(x, y)
  })

/**
 * A ranking that keeps its index across searches. `rank(items, query, limit)` answers with the
 * tools matching any word of the query, best first (the more words matched, and the better the
 * fields they matched, the higher), at most `limit`; an empty query lists every tool by name.
 * The last index built is reused while the tools are the same by their searched fields (the
 * gateway hands fresh objects for an unchanged listing on every search), and rebuilt when any
 * tool was added, removed or changed.
 */
export const ranking = <A extends Searchable>() => {
  let last: Index | undefined
  let builds = 0
  return {
    rank: (items: ReadonlyArray<A>, query: string, limit: number): ReadonlyArray<Ranked<A>> => {
      if (last === undefined || !sameItems(last.items, items)) {
        last = build(items)
        builds += 1
      }
      return last.find(query, Math.max(0, limit)).flatMap((hit) => {
        const item = items[hit.at]
        return item === undefined ? [] : [{ item, score: hit.score, best: hit.best }]
      })
    },
    /** How many indexes were built: a test's window on the cache. */
    builds: () => builds
  }
}
