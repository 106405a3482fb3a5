/** Loads ApiModules.ts when a command needs it (its first use loads it; later uses get the same module). */
import * as Effect from "effect/Effect"

export const loadApi = Effect.promise(() => import("./ApiModules.js"))
