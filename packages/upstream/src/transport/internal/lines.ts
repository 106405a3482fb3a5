/**
 * Line splitting with a size cap. Effect's `Stream.splitLines` has no cap, and an upstream that
 * never writes a newline would otherwise grow our memory without bound.
 */
import { FrameTooLarge } from "../Transport.js"

/**
 * Splits raw bytes into lines (LF or CRLF) in place, for a reader that handles every line of a
 * chunk in one go (a Stream stage per step costs more than the line itself). `push` answers the
 * complete lines of a chunk, or FrameTooLarge once a line (or the unterminated rest) exceeds `max`
 * characters; an unterminated last line waits for the next chunk.
 */
/** One options object for every chunk's decode, rather than one per chunk. */
const streaming = { stream: true } as const

export const makeLineSplitter = (max: number) => {
  const decoder = new TextDecoder()
  let buffered = ""
  return {
    push: (bytes: Uint8Array): ReadonlyArray<string> | FrameTooLarge => {
      const parts = (buffered + decoder.decode(bytes, streaming)).split("\n")
      buffered = parts.pop() ?? ""
      let tooLong = buffered.length > max
      for (let i = 0; i < parts.length; i++) {
        const l = parts[i]!
        if (l.endsWith("\r")) parts[i] = l.slice(0, -1)
        if (parts[i]!.length > max) tooLong = true
      }
      return tooLong ? new FrameTooLarge({ limit: max }) : parts
    }
  }
}
