/**
 * Edits of a config file that keep everything the user wrote: comments, key order, indentation and
 * the entries mcpx-fx does not know. jsonc-parser computes each edit as a text change at the right
 * place, so only the lines of the changed entry move; the result is parsed and checked as a config
 * file before anyone writes it.
 *
 * A file keeps its servers under `mcpServers`, or under `servers` in VS Code's shape, and an edit
 * goes where the file keeps them (a new VS Code entry also gets the `type` VS Code needs).
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schedule from "effect/Schedule"
import * as jsonc from "jsonc-parser"
import { randomBytes } from "node:crypto"
import { ConfigError, parseText, type ServersKey } from "./ConfigFile.js"
import * as Jsonc from "./internal/Jsonc.js"

/** A file's text and what is in it, as an edit needs them. */
export interface Document {
  readonly file: string
  readonly text: string
  /** Where the file keeps its servers (the key an added server goes under). */
  readonly key: ServersKey
  /** The raw entries by name, under either key. */
  readonly entries: ReadonlyMap<string, { readonly key: ServersKey; readonly entry: unknown }>
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** Reads a document from text (an empty or missing file is an empty object). */
export const documentOf = (file: string, text: string): Either.Either<Document, ConfigError> => {
  const source = text.trim() === "" ? "{}\n" : text
  return Either.flatMap(
    Either.mapLeft(
      Jsonc.parse(source),
      (e) =>
        new ConfigError({ file, path: "", detail: `expected JSON (comments and trailing commas allowed); ${e.message} at line ${e.line}, column ${e.column}` })
    ),
    (json) => {
      if (!isRecord(json)) return Either.left(new ConfigError({ file, path: "", detail: "expected a JSON object" }))
      const entries = new Map<string, { readonly key: ServersKey; readonly entry: unknown }>()
      for (const key of ["mcpServers", "servers"] as const) {
        const servers = json[key]
        if (isRecord(servers)) { for (const [name, entry] of Object.entries(servers)) if (!entries.has(name)) entries.set(name, { key, entry }) }
      }
      const key: ServersKey = isRecord(json.servers) && !isRecord(json.mcpServers) ? "servers" : "mcpServers"
      return Either.right({ file, text: source, key, entries })
    }
  )
}

/** The file's own indentation unit and line ending, so an edit looks as if the user made it. */
const styleOf = (text: string): { readonly unit: string; readonly eol: string } => {
  const indented = /^([ \t]+)\S/m.exec(text)?.[1]
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  return { unit: indented === undefined ? "  " : indented.startsWith("\t") ? "\t" : indented, eol }
}

/** The whitespace a line starts with, for the line holding `offset`. */
const indentAt = (text: string, offset: number): string => {
  const start = text.lastIndexOf("\n", offset - 1) + 1
  return /^[ \t]*/.exec(text.slice(start))?.[0] ?? ""
}

/** A value as JSON in the file's style, its later lines indented by `indent`. */
const render = (value: unknown, unit: string, indent: string, eol: string): string => JSON.stringify(value, null, unit).split("\n").join(`${eol}${indent}`)

/** The offset of the next character at or after `from` that is neither whitespace nor in a comment. */
const nextToken = (text: string, from: number): number => {
  let i = from
  while (i < text.length) {
    if (/\s/.test(text[i]!)) i++
    else if (text.startsWith("//", i)) i = text.indexOf("\n", i) < 0 ? text.length : text.indexOf("\n", i)
    else if (text.startsWith("/*", i)) i = text.indexOf("*/", i + 2) < 0 ? text.length : text.indexOf("*/", i + 2) + 2
    else return i
  }
  return i
}

type TextEdit = { readonly offset: number; readonly length: number; readonly content: string }

/**
 * Adds `key: value` to the object at `path` the way a person would: on a line of its own after
 * the last property (after that line's comment, with the comma where it belongs), inline in an
 * object written on one line, and only the new lines in the file's indentation. Where the object
 * does not exist yet, jsonc-parser creates the path.
 */
const insertProperty = (text: string, path: jsonc.JSONPath, key: string, value: unknown): string => {
  const { eol, unit } = styleOf(text)
  const tree = jsonc.parseTree(text, [], Jsonc.parseOptions)
  const node = tree === undefined ? undefined : jsonc.findNodeAtLocation(tree, path)
  if (node === undefined || node.type !== "object") {
    return jsonc.applyEdits(
      text,
      jsonc.modify(text, [...path, key], value, { formattingOptions: { insertSpaces: unit !== "\t", tabSize: unit === "\t" ? 1 : unit.length, eol } })
    )
  }
  const close = node.offset + node.length - 1
  const props = node.children ?? []
  const last = props[props.length - 1]
  const edits: Array<TextEdit> = []
  if (last === undefined) {
    const outer = indentAt(text, node.offset)
    const inner = outer + unit
    edits.push({
      offset: node.offset + 1,
      length: close - node.offset - 1,
      content: `${eol}${inner}${JSON.stringify(key)}: ${render(value, unit, inner, eol)}${eol}${outer}`
    })
  } else {
    const end = last.offset + last.length
    const after = nextToken(text, end)
    const trailingComma = text[after] === ","
    const multiLine = text.slice(node.offset, close).includes("\n")
    if (multiLine) {
      const indent = indentAt(text, props[0]!.offset)
      const from = trailingComma ? after + 1 : end
      const newline = text.indexOf("\n", from)
      const lineEnd = newline < 0 || newline > close ? close : text[newline - 1] === "\r" ? newline - 1 : newline
      if (!trailingComma) edits.push({ offset: end, length: 0, content: "," })
      const entry = `${eol}${indent}${JSON.stringify(key)}: ${render(value, unit, indent, eol)}${trailingComma ? "," : ""}`
      // A closing brace on the last property's line goes on a line of its own after the new entry.
      edits.push({ offset: lineEnd, length: 0, content: lineEnd === close ? `${entry}${eol}${indentAt(text, node.offset)}` : entry })
    } else {
      const inline = `${JSON.stringify(key)}: ${JSON.stringify(value, null, 1).replace(/\n\s*/g, " ")}`
      edits.push(trailingComma ? { offset: after + 1, length: 0, content: ` ${inline},` } : { offset: end, length: 0, content: `, ${inline}` })
    }
  }
  return jsonc.applyEdits(text, edits)
}

const lineStart = (text: string, offset: number): number => text.lastIndexOf("\n", offset - 1) + 1

/** The end of the line holding `offset`, past its newline. */
const lineEndPast = (text: string, offset: number): number => {
  const newline = text.indexOf("\n", offset)
  return newline < 0 ? text.length : newline + 1
}

/**
 * Removes the property at `path` as a person would: a property on lines of its own goes with those
 * lines (and its comment), and the comma that separated it goes too (the one before it, when it
 * was the last), so a plain-JSON file stays plain JSON. A property sharing a line is cut out of it.
 */
const removeProperty = (text: string, path: jsonc.JSONPath): string => {
  const tree = jsonc.parseTree(text, [], Jsonc.parseOptions)
  const value = tree === undefined ? undefined : jsonc.findNodeAtLocation(tree, path)
  const prop = value?.parent
  const siblings = prop?.parent?.children ?? []
  if (prop === undefined || prop.type !== "property") return jsonc.applyEdits(text, jsonc.modify(text, path, undefined, {}))
  const start = prop.offset
  const end = prop.offset + prop.length
  const after = nextToken(text, end)
  const comma = text[after] === "," ? after : undefined
  const tail = comma === undefined ? end : comma + 1
  const restOfLine = text.slice(tail, lineEndPast(text, tail)).trim()
  const ownLines = text.slice(lineStart(text, start), start).trim() === "" && (restOfLine === "" || restOfLine.startsWith("//"))
  if (!ownLines) return jsonc.applyEdits(text, jsonc.modify(text, path, undefined, {}))
  const edits: Array<TextEdit> = []
  const index = siblings.indexOf(prop)
  const previous = index > 0 ? siblings[index - 1] : undefined
  if (comma === undefined && previous !== undefined) {
    const before = nextToken(text, previous.offset + previous.length)
    if (text[before] === ",") edits.push({ offset: before, length: 1, content: "" })
  }
  const from = lineStart(text, start)
  edits.push({ offset: from, length: lineEndPast(text, tail) - from, content: "" })
  return jsonc.applyEdits(text, edits)
}

/** What an edit produced: the new text, checked as a config file. */
const checked = (doc: Document, text: string): Effect.Effect<string, ConfigError> => Effect.as(parseText(doc.file, text), text)

const noSuch = (doc: Document, name: string) => Effect.fail(new ConfigError({ file: doc.file, path: "", detail: `no server ${JSON.stringify(name)} here` }))

/** Adds a server entry (the caller has checked the name is free). */
export const addServer = (doc: Document, name: string, entry: Readonly<Record<string, unknown>>): Effect.Effect<string, ConfigError> => {
  const vsCode = doc.key === "servers" && entry.type === undefined
    ? { type: typeof entry.url === "string" ? "http" : "stdio", ...entry }
    : entry
  return checked(doc, insertProperty(doc.text, [doc.key], name, vsCode))
}

/** Removes a server entry from wherever the file keeps it. */
export const removeServer = (doc: Document, name: string): Effect.Effect<string, ConfigError> => {
  const found = doc.entries.get(name)
  if (found === undefined) return noSuch(doc, name)
  return checked(doc, removeProperty(doc.text, [found.key, name]))
}

/**
 * Disables a server: `"disabled": true` on its entry here, or — when a farther file defines it —
 * an entry of its own here that only says so (the nearest entry of a name wins whole).
 */
export const disableServer = (doc: Document, name: string): Effect.Effect<string, ConfigError> => {
  const found = doc.entries.get(name)
  if (found === undefined) return checked(doc, insertProperty(doc.text, [doc.key], name, { disabled: true }))
  return checked(doc, insertProperty(doc.text, [found.key, name], "disabled", true))
}

/**
 * Enables a server disabled here: drops its `disabled` key, or the whole entry when that key was
 * all it said (a farther file's definition then applies again).
 */
export const enableServer = (doc: Document, name: string): Effect.Effect<string, ConfigError> => {
  const found = doc.entries.get(name)
  if (found === undefined) return noSuch(doc, name)
  const onlyDisabled = isRecord(found.entry) && Object.keys(found.entry).every((k) => k === "disabled")
  return checked(doc, removeProperty(doc.text, onlyDisabled ? [found.key, name] : [found.key, name, "disabled"]))
}

/** Whether this file's entry for `name` disables it. */
export const disablesHere = (doc: Document, name: string): boolean => {
  const found = doc.entries.get(name)
  return found !== undefined && isRecord(found.entry) && found.entry.disabled === true
}

/** Reads a file as a document; a file that does not exist is an empty one. */
export const read = Effect.fn("ConfigEdit.read")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const exists = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))
  const text = exists
    ? yield* fs.readFileString(file).pipe(Effect.mapError((e) => new ConfigError({ file, path: "", detail: `cannot be read: ${e.message}` })))
    : ""
  return yield* documentOf(file, text)
})

/**
 * Writes new text over a file atomically (a temp file beside it, then a rename), keeping the
 * file's mode; a watcher sees one complete change.
 */
export const write = Effect.fn("ConfigEdit.write")(function*(file: string, text: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const failed = (e: { readonly message: string }) => new ConfigError({ file, path: "", detail: `cannot be written: ${e.message}` })
  const mode = yield* fs.stat(file).pipe(Effect.map((s) => s.mode & 0o7777), Effect.orElseSucceed(() => 0o644))
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`)
  yield* fs.makeDirectory(path.dirname(file), { recursive: true }).pipe(Effect.mapError(failed))
  yield* Effect.gen(function*() {
    yield* fs.writeFileString(temp, text, { flag: "wx", mode })
    yield* fs.chmod(temp, mode)
    yield* fs.rename(temp, file)
  }).pipe(Effect.onError(() => Effect.ignore(fs.remove(temp))), Effect.mapError(failed))
})

/** How long an edit waits for another process's edit of the same file before giving up. */
const lockWait = Duration.seconds(10)

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: the process exists but is someone else's.
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Another process holds the edit lock (pid 0: it is still writing its pid, or was just found dead). */
class Held extends Data.TaggedError("Held")<{ readonly pid: number }> {}

/**
 * Runs a read-modify-write of `file` holding the file's edit lock (`.<name>.lock` beside it,
 * created exclusively and holding the owner's pid), so two edits at once (two `servers add` in
 * parallel) both land instead of the later rename dropping the earlier one. A lock whose owner
 * has died is taken over; one held by a live process is waited for, up to ten seconds, then the
 * edit fails naming that process.
 */
export const locked = <A, E, R>(file: string, edit: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const lock = path.join(path.dirname(file), `.${path.basename(file)}.lock`)
    const failed = (e: { readonly message: string }) => new ConfigError({ file, path: "", detail: `cannot be locked for editing: ${e.message}` })
    const take: Effect.Effect<void, ConfigError | Held> = fs.writeFileString(lock, String(process.pid), { flag: "wx", mode: 0o600 }).pipe(
      Effect.catchAll((e): Effect.Effect<void, ConfigError | Held> => {
        if (e._tag !== "SystemError" || e.reason !== "AlreadyExists") return Effect.fail(failed(e))
        return fs.readFileString(lock).pipe(
          Effect.orElseSucceed(() => ""),
          Effect.flatMap((text) => {
            const pid = Number.parseInt(text, 10)
            // A lock being written has no pid yet; a dead owner's lock is stale.
            if (Number.isInteger(pid) && pid > 0 && !alive(pid)) {
              return Effect.zipRight(Effect.ignore(fs.remove(lock)), Effect.fail(new Held({ pid: 0 })))
            }
            return Effect.fail(new Held({ pid: Number.isInteger(pid) ? pid : 0 }))
          })
        )
      })
    )
    yield* fs.makeDirectory(path.dirname(file), { recursive: true }).pipe(Effect.mapError(failed))
    const acquire = take.pipe(
      Effect.retry({
        schedule: Schedule.spaced(Duration.millis(20)).pipe(Schedule.upTo(lockWait)),
        while: (e) => e._tag === "Held"
      }),
      Effect.catchTag("Held", (held) =>
        Effect.fail(
          new ConfigError({
            file,
            path: "",
            detail: `is being edited by another mcpx-fx (pid ${held.pid}, lock ${lock}); try again once it has finished`
          })
        ))
    )
    return yield* Effect.acquireUseRelease(acquire, () => edit, () => Effect.ignore(fs.remove(lock)))
  })
