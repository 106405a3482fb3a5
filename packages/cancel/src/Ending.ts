/**
 * What waits for one thing's end (a call in place, a tool call's observation): each waiter is
 * told once, latest first, as finalizers unwind, or at once when it comes after the end. A plain
 * list run by the end the thing already has, where a finalizer of each waiter's own would be an
 * uninterruptible stretch of Effect operations around the call.
 */
export class Ending {
  private waiting: Array<() => void> | undefined = undefined
  private over = false

  /** Whether the end has come. */
  get isOver(): boolean {
    return this.over
  }

  /** `done` is run once the end comes (at once if it has). */
  onEnd(done: () => void): void {
    if (this.over) return done()
    if (this.waiting === undefined) this.waiting = [done]
    else this.waiting.push(done)
  }

  /** The end: what waited for it is told, latest first; a second end tells nothing. */
  end(): void {
    this.over = true
    const waiting = this.waiting
    if (waiting === undefined) return
    this.waiting = undefined
    for (let i = waiting.length - 1; i >= 0; i--) waiting[i]!()
  }
}
