/**
 * Secrets out of what the gateway tells others. Tokens live in configured `env` and `headers`
 * values and in command args (`--token=…`), and upstreams echo them back in stderr and error
 * bodies; all of that reaches hosts and `/v1` callers as error messages, listing failures and
 * server rows. Redacted:
 *
 * - every configured `env` and `headers` value (and a header's credential after its scheme) of at
 *   least `MinSecretLength` characters, wherever it appears, and as it appears re-encoded: escaped
 *   in JSON text, percent-encoded, in base64 (inside a longer encoding too, e.g. a Basic
 *   credential's `user:secret`), or broken over lines;
 * - what looks like a secret whatever its source: `--token=…`/`--api-key …`/`--password…` flags,
 *   `GITHUB_TOKEN=…` assignments, `Bearer …`/`Basic …` credentials, a URL's password, its
 *   `token`/`key` query values and token-like path segments (`/bot123:AA…/`, `/hooks/T0/B0/x…`),
 *   and `"token": "…"` members of JSON text.
 *
 * Raw text still goes to the log, and to `/v1` callers on the owner-only unix socket (the CLI),
 * who set `RawForOwner` there: the owner may see what their own upstreams said.
 */
import * as FiberRef from "effect/FiberRef"
import type { ServerDefinition } from "@mcpx-fx/upstream/ServerDefinition"

/** What a secret is replaced with. */
export const Marker = "[redacted]"

/** Shorter values are too common (`1`, `true`, `info`) to be told from ordinary text. */
export const MinSecretLength = 6

/**
 * Set (with `Effect.locally`) for requests from the state directory's owner (the unix socket): `/v1`
 * then shows relayed text raw, and every open question (`/v1/elicit`, Ask.ts), not only the caller's.
 */
export const RawForOwner: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/** Takes secrets out of text and args. */
export interface Redactor {
  readonly text: (s: string) => string
  readonly args: (args: ReadonlyArray<string>) => ReadonlyArray<string>
  /** Every string inside a JSON value (error `data`), to a bounded depth. */
  readonly json: (u: unknown) => unknown
}

const SecretWord =
  "(?:token|secret|passw(?:or)?d|pwd|api[-_]?key|apikey|access[-_]?key|private[-_]?key|client[-_]?secret|auth|authorization|credentials?|bearer|cookie)"

/** A flag or variable name that holds a secret: a word of it is one of the secret words. */
const secretName = new RegExp(`(?:^|[-_.])${SecretWord}(?:$|[-_.])|${SecretWord}$`, "i")

const patterns: ReadonlyArray<readonly [RegExp, string | ((match: string, ...groups: Array<string>) => string)]> = [
  // Credentials after an auth scheme (a Basic one has a digit or padding, which words do not).
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]{6,}/gi, `$1 ${Marker}`],
  [/\b(Basic)\s+(?=[A-Za-z0-9+/]*[0-9=])[A-Za-z0-9+/]{6,}={0,2}/gi, `$1 ${Marker}`],
  // --token=value, --api-key value, -password: value.
  [new RegExp(`(--?[A-Za-z0-9_.-]*${SecretWord}[A-Za-z0-9_.-]*)(=|:\\s*|\\s+)(?!-)(?!\\[redacted\\])[^\\s"',;]+`, "gi"), `$1$2${Marker}`],
  // GITHUB_TOKEN=value, API_KEY=value.
  [new RegExp(`\\b([A-Za-z][A-Za-z0-9_]*${SecretWord})=(?!\\[redacted\\])[^\\s"',;&]+`, "gi"), `$1=${Marker}`],
  // "token": "value" in JSON text.
  [new RegExp(`("[^"]*${SecretWord}[^"]*"\\s*:\\s*")(?:[^"\\\\]|\\\\.)+"`, "gi"), `$1${Marker}"`],
  // A URL's password.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/@:]+:)[^\s/@]+@/gi, `$1${Marker}@`],
  // A URL's token-like query values.
  [/([?&](?:access_token|token|api[-_]?key|key|secret|password|sig|signature)=)[^&\s#"']+/gi, `$1${Marker}`],
  // A URL's path segments that look like keys (long, letters and digits mixed), as webhook and bot
  // URLs carry them; the host and short words stay.
  [
    /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#"']+)((?:\/[^\s/?#"']*)+)/gi,
    (_m: string, origin: string, path: string) => origin + path.split("/").map((segment) => (tokenLike(segment) ? Marker : segment)).join("/")
  ]
]

/** A path segment that is a key rather than a word: 20 characters or more, with letters and digits both. */
function tokenLike(segment: string): boolean {
  return segment.length >= 20 && /^[A-Za-z0-9._~:+=-]+$/.test(segment) && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment)
}

const byPatterns = (s: string): string => patterns.reduce((text, [re, to]) => (typeof to === "string" ? text.replace(re, to) : text.replace(re, to)), s)

/**
 * What a secret's own characters become in base64 wherever it sits in the encoded bytes: the
 * characters that depend on its bytes alone, at each of the three alignments.
 */
const base64Forms = (secret: string): ReadonlyArray<string> => {
  const bytes = Buffer.from(secret, "utf8")
  const forms: Array<string> = []
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64")
    const start = offset === 0 ? 0 : offset + 1
    const end = Math.floor(((offset + bytes.length) * 8) / 6)
    const pure = encoded.slice(start, end)
    if (pure.length >= MinSecretLength + 2) forms.push(pure, pure.replace(/\+/g, "-").replace(/\//g, "_"))
  }
  return forms
}

const jsonEscaped = (secret: string): string => JSON.stringify(secret).slice(1, -1)

/** The forms a secret value is seen in besides itself: JSON-escaped, percent-encoded, base64. */
const encodedForms = (secret: string): ReadonlyArray<string> => [
  jsonEscaped(secret),
  encodeURIComponent(secret),
  encodeURIComponent(secret).replace(/%20/g, "+"),
  ...base64Forms(secret)
]

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * One pattern for every secret broken over lines (a wrapped log line, `\n` inside JSON text): a
 * line break of either kind, and the indentation after it, between two of its characters.
 */
const lineSplit = (secrets: ReadonlyArray<string>): RegExp | undefined => {
  if (secrets.length === 0) return undefined
  const gap = "(?:\\r?\\n[ \\t]*|(?:\\\\r)?\\\\n)?"
  return new RegExp(secrets.map((secret) => [...secret].map(escapeRegExp).join(gap)).join("|"), "g")
}

/** The secret values a definition configures: env and header values, and a header's credential. */
export const secretsOf = (definitions: ReadonlyArray<ServerDefinition>): ReadonlyArray<string> => {
  const values = new Set<string>()
  for (const def of definitions) {
    const raw = def.transport === "stdio" ? Object.values(def.env) : Object.values(def.headers)
    for (const v of raw) {
      values.add(v)
      const credential = /^\s*[A-Za-z]+\s+(\S+)\s*$/.exec(v)?.[1]
      if (credential !== undefined) values.add(credential)
    }
  }
  // Longest first, so a value that contains another is replaced whole.
  return [...values].filter((v) => v.length >= MinSecretLength).sort((a, b) => b.length - a.length)
}

/** A redactor for these secret values (and the patterns). */
export const make = (secrets: ReadonlyArray<string>): Redactor => {
  // Longest first, so a form that contains another is replaced whole.
  const forms = [...new Set([...secrets, ...secrets.flatMap(encodedForms)])]
    .filter((v) => v.length >= MinSecretLength)
    .sort((a, b) => b.length - a.length)
  const split = lineSplit([...new Set([...secrets, ...secrets.map(jsonEscaped)])])
  const text = (s: string): string => {
    let out = s
    for (const form of forms) if (out.includes(form)) out = out.split(form).join(Marker)
    if (split !== undefined) out = out.replace(split, Marker)
    return byPatterns(out)
  }
  const args = (list: ReadonlyArray<string>): ReadonlyArray<string> =>
    list.map((arg, i) => {
      const previous = list[i - 1]
      // `--token value`: the flag names the secret, the next word is it.
      if (
        previous !== undefined && /^--?[A-Za-z]/.test(previous) && !previous.includes("=") && secretName.test(previous.replace(/^-+/, "")) &&
        !arg.startsWith("-")
      ) {
        return Marker
      }
      const eq = arg.indexOf("=")
      if (eq > 0 && secretName.test(arg.slice(0, eq).replace(/^-+/, ""))) return `${arg.slice(0, eq)}=${Marker}`
      return text(arg)
    })
  const json = (u: unknown, depth = 0): unknown => {
    if (typeof u === "string") return text(u)
    if (depth > 32 || u === null || typeof u !== "object") return u
    if (Array.isArray(u)) return u.map((v) => json(v, depth + 1))
    return Object.fromEntries(Object.entries(u).map(([k, v]) => [k, json(v, depth + 1)]))
  }
  return { text, args, json: (u) => json(u) }
}

/** The redactor for the configured servers. */
export const forDefinitions = (definitions: ReadonlyArray<ServerDefinition>): Redactor => make(secretsOf(definitions))
