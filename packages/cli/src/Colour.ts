/**
 * Colour only on a terminal: help, errors and logs carry ANSI colour when the stream they go to is
 * a terminal, and never when it is piped or redirected, when `NO_COLOR` is set (https://no-color.org)
 * or when `TERM` is `dumb`. @effect/cli colours its help and errors unconditionally, so the decision
 * is applied where text leaves: a Console that takes the colour codes out.
 */
import * as Console from "effect/Console"

/** Whether text for a stream may be coloured. */
export const enabled = (isTTY: boolean | undefined, env: Readonly<Record<string, string | undefined>>): boolean =>
  isTTY === true && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb"

// Select Graphic Rendition only (colour, bold): cursor movement is not colour.
const sgr = /\x1b\[[0-9;]*m/g

/** `text` without its colour codes. */
export const strip = (text: string): string => text.replace(sgr, "")

const plainArgs = (args: ReadonlyArray<unknown>): ReadonlyArray<unknown> => args.map((a) => (typeof a === "string" ? strip(a) : a))

/**
 * `base` with colour taken out of what goes to stdout (`log`, `info`, `debug`) unless `stdout`
 * allows it, and out of what goes to stderr (`error`, `warn`, `trace`) unless `stderr` does.
 */
export const console = (base: Console.Console, allowed: { readonly stdout: boolean; readonly stderr: boolean }): Console.Console => {
  const out = <R>(f: (...args: ReadonlyArray<unknown>) => R) => allowed.stdout ? f : (...args: ReadonlyArray<unknown>) => f(...plainArgs(args))
  const err = <R>(f: (...args: ReadonlyArray<unknown>) => R) => allowed.stderr ? f : (...args: ReadonlyArray<unknown>) => f(...plainArgs(args))
  const unsafe = base.unsafe
  return {
    ...base,
    log: out((...args) => base.log(...args)),
    info: out((...args) => base.info(...args)),
    debug: out((...args) => base.debug(...args)),
    error: err((...args) => base.error(...args)),
    warn: err((...args) => base.warn(...args)),
    trace: err((...args) => base.trace(...args)),
    unsafe: {
      ...unsafe,
      log: out((...args) => unsafe.log(...args)),
      info: out((...args) => unsafe.info(...args)),
      debug: out((...args) => unsafe.debug(...args)),
      error: err((...args) => unsafe.error(...args)),
      warn: err((...args) => unsafe.warn(...args)),
      trace: err((...args) => unsafe.trace(...args))
    }
  }
}
