/** The bench scripts' command line: `--name value` options and `--name` flags. */
const argv = process.argv.slice(2)

/** The value after `--name`, if given. */
export const option = (name: string): string | undefined => {
  const at = argv.indexOf(`--${name}`)
  return at >= 0 ? argv[at + 1] : undefined
}

/** Whether `--name` was given. */
export const flag = (name: string): boolean => argv.includes(`--${name}`)

/** Every value given after `--name`, for an option that may be repeated. */
export const options = (name: string): ReadonlyArray<string> => argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] !== undefined ? [argv[i + 1]!] : []))
