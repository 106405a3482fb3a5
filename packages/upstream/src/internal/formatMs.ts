/** Milliseconds as people read them in messages: `250ms`, `1.5s`. */
export const formatMs = (ms: number): string => ms < 1000 ? `${Math.max(0, Math.round(ms))}ms` : `${Math.round(ms / 100) / 10}s`
