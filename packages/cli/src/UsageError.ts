/**
 * A command line that parsed but asks for something impossible: an unknown setting path, an
 * option given twice, options that exclude each other. Exits 2, like @effect/cli's own
 * validation errors.
 */
import * as Data from "effect/Data"

/** A usage mistake; `message` is printed on stderr as is. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}
