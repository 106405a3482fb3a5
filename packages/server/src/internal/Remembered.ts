/**
 * A pure function of a header value, with its answers remembered: a client sends the same Accept,
 * Content-Type and Host on every request, and taking them apart again allocated a dozen strings
 * and arrays per POST. Bounded: past `MaxRemembered` values (a client varying them on purpose) it
 * starts over. Written only on a miss, so a busy daemon does not grow and shrink its table.
 */
export const remembered = <A>(of: (raw: string) => A): (raw: string) => A => {
  const known = new Map<string, A>()
  return (raw) => {
    const hit = known.get(raw)
    if (hit !== undefined) return hit
    const answer = of(raw)
    if (known.size >= MaxRemembered) known.clear()
    known.set(raw, answer)
    return answer
  }
}

/** How many values are remembered before starting over. */
export const MaxRemembered = 64
