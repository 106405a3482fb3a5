/**
 * Value codecs shared by the settings registry and the config file's per-server blocks. A value
 * arrives either as text (an env var or a flag) or as JSON (a config file), and every refusal
 * reads `expected <what>, got <value>` so the caller only has to prefix where it came from.
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { AcceptedPreferenceNames, type Preference, PreferenceFromString } from "@mcpx-fx/upstream/era/Preference"
import * as Durations from "./Duration.js"

/** How one kind of value is read from text and from JSON, and how it is shown again. */
export interface Codec<A> {
  /** What a valid value looks like, for error messages and help text. */
  readonly expected: string
  /** Decodes the text of an env var or a flag. */
  readonly fromString: Schema.Schema<A, string>
  /** Decodes a config file's JSON value; encodes to the JSON that `/v1/settings` reports. */
  readonly fromJson: Schema.Schema<A, unknown>
  /** The text form: what an env var or flag would hold, and what `settings list` prints. */
  readonly format: (a: A) => string
}

/** A raw value as quoted in error messages. */
export const show = (u: unknown): string => {
  if (u === undefined) return "nothing"
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

/** The refusal every codec uses, so messages read the same for every setting and key. */
export const refusal = (expected: string, got: unknown): string => `expected ${expected}, got ${show(got)}`

/** `schema`, refusing a value with `refusal(expected, …)`: how a config file's keys say what they take. */
export const expecting = <S extends Schema.Schema.Any>(schema: S, expected: string): S =>
  schema.annotations({
    message: (issue) => ({ message: refusal(expected, issue.actual), override: false })
  }) as S

/** An optional key that, when present, holds a value of `schema` (never `undefined`). */
export const exact = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** A string key of a config file. */
export const Text = expecting(Schema.String, "a string")

interface Spec<A> {
  readonly expected: string
  readonly type: Schema.Schema<A>
  readonly parse: (s: string) => Option.Option<A>
  /** JSON values other than strings (numbers, booleans, arrays) that also mean an `A`. */
  readonly fromOtherJson?: (u: unknown) => Option.Option<A>
  readonly format: (a: A) => string
  readonly toJson: (a: A) => unknown
}

const fromStringOf = <A>(spec: Spec<A>): Schema.Schema<A, string> =>
  Schema.transformOrFail(Schema.String, spec.type, {
    strict: true,
    decode: (s, _, ast) =>
      Option.match(spec.parse(s), {
        onNone: () => ParseResult.fail(new ParseResult.Type(ast, s, refusal(spec.expected, s))),
        onSome: ParseResult.succeed
      }),
    encode: (a) => ParseResult.succeed(spec.format(a))
  })

const jsonOf = <A>(
  expected: string,
  fromString: Schema.Schema<A, string>,
  fromOtherJson: ((u: unknown) => Option.Option<A>) | undefined,
  toJson: (a: A) => unknown
): Schema.Schema<A, unknown> =>
  Schema.transformOrFail(Schema.Unknown, Schema.typeSchema(fromString), {
    strict: true,
    decode: (u, options, ast) => {
      if (typeof u === "string") return ParseResult.decodeUnknown(fromString)(u, options)
      const other = fromOtherJson === undefined ? Option.none() : fromOtherJson(u)
      return Option.match(other, {
        onNone: () => ParseResult.fail(new ParseResult.Type(ast, u, refusal(expected, u))),
        onSome: ParseResult.succeed
      })
    },
    encode: (a) => ParseResult.succeed(toJson(a))
  })

const make = <A>(spec: Spec<A>): Codec<A> => {
  const fromString = fromStringOf(spec)
  return {
    expected: spec.expected,
    fromString,
    fromJson: jsonOf(spec.expected, fromString, spec.fromOtherJson, spec.toJson),
    format: spec.format
  }
}

/** `2s`, `5m`, `1500ms`, `1h30m` or a bare number of milliseconds (a JSON number too). */
export const duration: Codec<Duration.Duration> = make({
  expected: Durations.expected,
  type: Schema.DurationFromSelf,
  parse: Durations.parse,
  fromOtherJson: (u) => (typeof u === "number" ? Durations.fromMillis(u) : Option.none()),
  format: Durations.format,
  toJson: Durations.format
})

const integerIn = (expected: string, min: number, max: number): Codec<number> => {
  const check = (n: number) => (Number.isSafeInteger(n) && n >= min && n <= max ? Option.some(n) : Option.none())
  return make({
    expected,
    type: Schema.Int,
    parse: (s) => (/^\s*\d+\s*$/.test(s) ? check(Number(s)) : Option.none()),
    fromOtherJson: (u) => (typeof u === "number" ? check(u) : Option.none()),
    format: String,
    toJson: (n) => n
  })
}

/** A whole number of at least 1. */
export const positiveInt: Codec<number> = integerIn("a positive integer", 1, Number.MAX_SAFE_INTEGER)

/** A whole number of at least 0 (where 0 means "derived", as its setting says). */
export const nonNegativeInt: Codec<number> = integerIn("a whole number, 0 or more", 0, Number.MAX_SAFE_INTEGER)

/** A TCP port, where 0 asks the OS for an ephemeral one. */
export const port: Codec<number> = integerIn("a port number from 0 to 65535", 0, 65535)

const truthy = ["true", "1", "yes", "on"]
const falsy = ["false", "0", "no", "off"]

/** `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`, any case), or a JSON boolean. */
export const boolean: Codec<boolean> = make({
  expected: "true or false",
  type: Schema.Boolean,
  parse: (s) => {
    const k = s.trim().toLowerCase()
    return truthy.includes(k) ? Option.some(true) : falsy.includes(k) ? Option.some(false) : Option.none()
  },
  fromOtherJson: (u) => (typeof u === "boolean" ? Option.some(u) : Option.none()),
  format: String,
  toJson: (b) => b
})

/**
 * One exact web origin (`scheme://host[:port]`). It is normalised the way a browser writes the
 * Origin header (lower-case host, default port dropped), since that header is what it is compared with.
 */
const parseOrigin = (s: string): Option.Option<string> => {
  const text = s.trim()
  if (!/^https?:\/\//i.test(text)) return Option.none()
  try {
    const u = new URL(text)
    const bare = u.pathname === "/" && u.search === "" && u.hash === "" && u.username === "" && u.password === ""
    const noPathTyped = !/^https?:\/\/[^/]+\/./i.test(text)
    return bare && noPathTyped && u.origin !== "null" ? Option.some(u.origin) : Option.none()
  } catch {
    return Option.none()
  }
}

const parseOrigins = (items: ReadonlyArray<string>): Option.Option<ReadonlyArray<string>> => {
  const out: Array<string> = []
  for (const item of items) {
    const o = parseOrigin(item)
    if (Option.isNone(o)) return Option.none()
    if (!out.includes(o.value)) out.push(o.value)
  }
  return Option.some(out)
}

/** Exact origins: comma-separated as text, a list of strings in JSON; empty text is an empty list. */
export const origins: Codec<ReadonlyArray<string>> = make({
  expected: "exact origins such as https://app.example.com (comma-separated)",
  type: Schema.Array(Schema.String),
  parse: (s) => (s.trim() === "" ? Option.some([]) : parseOrigins(s.split(","))),
  fromOtherJson: (u) => Array.isArray(u) && u.every((x): x is string => typeof x === "string") ? parseOrigins(u) : Option.none(),
  format: (a) => a.join(","),
  toJson: (a) => [...a]
})

const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const hostname = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

const isIpv6 = (s: string): boolean => {
  const halves = s.split("::")
  if (halves.length > 2) return false
  const groups = halves.flatMap((h) => (h === "" ? [] : h.split(":")))
  // A trailing dotted quad stands for two groups (`::ffff:127.0.0.1`).
  const last = groups[groups.length - 1]
  const quad = last !== undefined && ipv4.test(last)
  const hex = quad ? groups.slice(0, -1) : groups
  if (!hex.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false
  const count = hex.length + (quad ? 2 : 0)
  return halves.length === 2 ? count < 8 : count === 8
}

/** An address to listen on: an IPv4 or IPv6 literal (brackets optional) or a host name. */
export const host: Codec<string> = make({
  expected: "an IP address or host name",
  type: Schema.String,
  parse: (s) => {
    const t = s.trim().replace(/^\[(.*)\]$/, "$1")
    // An all-numeric name is an IPv4 address or nothing (`256.1.1.1` is not a host name).
    const ok = /^[\d.]+$/.test(t) ? ipv4.test(t) : t.includes(":") ? isIpv6(t) : hostname.test(t)
    return ok ? Option.some(t) : Option.none()
  },
  format: (a) => a,
  toJson: (a) => a
})

/** One `transport.allowedHosts` entry: a host name or IP literal, optionally with `:port`. */
const parseHostEntry = (s: string): Option.Option<string> => {
  const t = s.trim().toLowerCase()
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(t)
  if (m === null || m[1] === undefined) return Option.none()
  const name = m[1]
  if (Option.isNone(Schema.decodeOption(host.fromString)(name))) return Option.none()
  if (m[2] !== undefined && Number(m[2]) > 65535) return Option.none()
  return Option.some(t)
}

const parseHostEntries = (items: ReadonlyArray<string>): Option.Option<ReadonlyArray<string>> => {
  const out: Array<string> = []
  for (const item of items) {
    const h = parseHostEntry(item)
    if (Option.isNone(h)) return Option.none()
    if (!out.includes(h.value)) out.push(h.value)
  }
  return Option.some(out)
}

/** Host names a request's Host may use: `name` or `name:port`, comma-separated as text, a list in JSON. */
export const hosts: Codec<ReadonlyArray<string>> = make({
  expected: "host names such as mcp.example.com or mcp.example.com:8443 (comma-separated)",
  type: Schema.Array(Schema.String),
  parse: (s) => (s.trim() === "" ? Option.some([]) : parseHostEntries(s.split(","))),
  fromOtherJson: (u) => Array.isArray(u) && u.every((x): x is string => typeof x === "string") ? parseHostEntries(u) : Option.none(),
  format: (a) => a.join(","),
  toJson: (a) => [...a]
})

/** A bearer token: at least 16 visible ASCII characters, or empty for none. */
export const token: Codec<string> = make({
  expected: "a token of at least 16 visible ASCII characters without spaces, or empty for none",
  type: Schema.String,
  parse: (s) => (s === "" || /^[\x21-\x7e]{16,}$/.test(s) ? Option.some(s) : Option.none()),
  format: (a) => a,
  toJson: (a) => a
})

/** A string matching `pattern`, or empty for the default. */
export const matching = (expected: string, pattern: RegExp): Codec<string> =>
  make({
    expected,
    type: Schema.String,
    parse: (s) => {
      const t = s.trim()
      return t === "" || pattern.test(t) ? Option.some(t) : Option.none()
    },
    format: (a) => a,
    toJson: (a) => a
  })

/** A NATS server URL (nats://, tls://, ws:// or wss://; several comma-separated), or empty for none. */
export const natsUrl: Codec<string> = make({
  expected: "empty (no fleet) or a NATS URL such as nats://127.0.0.1:4222 (several separated by commas)",
  type: Schema.String,
  parse: (s) => {
    const t = s.trim()
    if (t === "") return Option.some("")
    const ok = t.split(",").every((u) => {
      if (!/^(nats|tls|ws|wss):\/\//.test(u.trim())) return false
      try {
        new URL(u.trim())
        return true
      } catch {
        return false
      }
    })
    return ok ? Option.some(t) : Option.none()
  },
  format: (a) => a,
  toJson: (a) => a
})

/** A shared secret: at least 32 characters, or empty for none. */
export const sharedSecret: Codec<string> = make({
  expected: "a secret of at least 32 characters, or empty for none",
  type: Schema.String,
  parse: (s) => (s === "" || s.length >= 32 ? Option.some(s) : Option.none()),
  format: (a) => a,
  toJson: (a) => a
})

/** Where tasks are kept: empty for the embedded store in the state dir, or a `postgres://` URL. */
export const storeUrl: Codec<string> = make({
  expected: "empty (the embedded store in the state dir) or a postgres:// or postgresql:// URL",
  type: Schema.String,
  parse: (s) => {
    const t = s.trim()
    if (t === "") return Option.some("")
    if (!/^postgres(ql)?:\/\//.test(t)) return Option.none()
    try {
      new URL(t)
      return Option.some(t)
    } catch {
      return Option.none()
    }
  },
  format: (a) => a,
  toJson: (a) => a
})

/** One of a fixed list of words (case-insensitive), reported in lower case. */
export const oneOf = <const L extends readonly [string, ...Array<string>]>(values: L): Codec<L[number]> =>
  make<L[number]>({
    expected: `one of ${values.join(", ")}`,
    type: Schema.Literal(...values),
    parse: (s) => {
      const k = s.trim().toLowerCase()
      return Option.fromNullable(values.find((v) => v === k))
    },
    format: (a) => a,
    toJson: (a) => a
  })

/**
 * `upstream.protocol` and a server's own `protocol` key: every accepted spelling, normalised by
 * `PreferenceFromString`, whose refusal already lists every accepted value.
 */
export const preference: Codec<Preference> = (() => {
  const expected = `one of: ${AcceptedPreferenceNames.join(", ")}`
  return {
    expected,
    fromString: PreferenceFromString,
    fromJson: jsonOf(expected, PreferenceFromString, undefined, (p) => p),
    format: (p: Preference) => p
  }
})()

/** The first issue of a failed decode, as one line (the codecs above make it `expected …, got …`). */
export const firstIssue = (error: ParseResult.ParseError): { readonly path: ReadonlyArray<PropertyKey>; readonly message: string } => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const first = issues[0]
  if (first === undefined) return { path: [], message: error.message }
  // Schema words an excess key as `is unexpected, expected: "a" | "b"`; lead with what happened.
  const message = first._tag === "Unexpected" ? `unknown key; ${first.message.replace(/^is unexpected, /, "")}` : first.message
  return { path: first.path, message }
}
