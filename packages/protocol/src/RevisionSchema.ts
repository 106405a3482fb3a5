/**
 * Schemas for revision and era names. Kept apart from Revision so that importing the revision
 * lists does not load effect/Schema (fixtures start several times faster without it).
 */
import * as Schema from "effect/Schema"
import { AllRevisions } from "./Revision.js"

/** Schema for a revision string mcpx-fx speaks. */
export const RevisionSchema = Schema.Literal(...AllRevisions)

/** Schema for an era name. */
export const EraSchema = Schema.Literal("legacy", "modern")
