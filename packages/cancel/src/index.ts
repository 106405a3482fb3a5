/**
 * @mcpx-fx/cancel: the one cancellation kit of mcpx-fx, below every other package (it depends on
 * `effect` alone). Its contract is written in docs/cancellation.md.
 */
/** A call cut short from outside with a typed error, waited for (`Abort`, `AbortHook`, `abortable`). */
export * as Abortable from "./Abortable.js"
/** A call cut short from outside and answered at once, its cleanup running on (`cuttable`). */
export * as Cuttable from "./Cuttable.js"
/** What waits for one thing's end, told once, latest first, by the end it already has (`Ending`). */
export * as Ending from "./Ending.js"
/** What a long-lived owner keeps of the calls in flight, without Map's or Set's garbage (`Members`, `Keyed`). */
export * as InFlight from "./InFlight.js"
/** A moment that cuts short everything run through it, answering each at once. */
export * as StopCut from "./StopCut.js"
