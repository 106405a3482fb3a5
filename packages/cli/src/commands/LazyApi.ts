/**
 * Loads what only some commands use when one of them runs, so `serve` and the rest start without
 * it (the first use loads a module; later uses get the same one).
 */
import * as Effect from "effect/Effect"

/** The `/v1` bodies and shaping (ShapeModules.ts). */
export const loadShapes = Effect.promise(() => import("./ShapeModules.js"))

/** Asking and answering questions (AskModules.ts), which builds on the `/v1` API's ask routes. */
export const loadAsking = Effect.promise(() => import("./AskModules.js"))

/** The `/v1/tasks` bodies (TaskModules.ts), for `tasks --json`. */
export const loadTasks = Effect.promise(() => import("./TaskModules.js"))
