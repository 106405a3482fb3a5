/**
 * Canonical JSON: object keys sorted (by UTF-16 code unit, recursively), arrays kept in order,
 * no whitespace, `undefined` members left out as JSON.stringify does. Written by hand rather than
 * by sorting and re-stringifying an object because JS objects put integer-like keys first, so
 * `{"9":…,"10":…}` could never come out sorted.
 */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`
  }
  if (value !== null && typeof value === "object") {
    const record = value as Readonly<Record<string, unknown>>
    const members: Array<string> = []
    for (const key of Object.keys(record).sort()) {
      const member = record[key]
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`)
    }
    return `{${members.join(",")}}`
  }
  // Functions, symbols and undefined have no JSON form; like JSON.stringify in an array, write null.
  return JSON.stringify(value) ?? "null"
}
