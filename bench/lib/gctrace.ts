/** Reading V8's `--trace-gc-nvp` lines (bench:gc and bench:carry). */

/** `name=value` pairs of one `--trace-gc-nvp` line. */
export const nvpPairs = (line: string): Map<string, string> =>
  new Map(
    line.split(/\s+/).flatMap((kv) => {
      const at = kv.indexOf("=")
      return at > 0 ? [[kv.slice(0, at), kv.slice(at + 1)] as const] : []
    })
  )
