/**
 * Help text for commands. Each command's `--help` ends with a concrete command line, because an
 * example answers "how do I write this?" faster than the option list does.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"

/** A command description: what it does, then example command lines. */
export const describe = (summary: string, ...examples: ReadonlyArray<string>): HelpDoc.HelpDoc =>
  HelpDoc.blocks([
    HelpDoc.p(summary),
    ...examples.map((example) => HelpDoc.p(Span.spans([Span.text("Example: "), Span.code(example)])))
  ])
