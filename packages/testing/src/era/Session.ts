/**
 * Per-connection bookkeeping the fixture needs to cancel work and to ask questions: in-flight
 * requests by id, and legacy sessions with their pending server→client requests.
 */
import type { Ask } from "./AskName.js"
import { type Id, type JsonObject, type Message, request, type Response } from "./Wire.js"

/** In-flight requests, so `notifications/cancelled` (or a session's end) can stop them. */
export class Inflight {
  private readonly running = new Map<Id, AbortController>()

  begin(id: Id, parent?: AbortSignal): AbortSignal {
    const controller = new AbortController()
    if (parent !== undefined) {
      if (parent.aborted) controller.abort()
      else parent.addEventListener("abort", () => controller.abort(), { once: true })
    }
    this.running.set(id, controller)
    return controller.signal
  }

  end(id: Id): void {
    this.running.delete(id)
  }

  cancel(id: unknown): boolean {
    if (typeof id !== "string" && typeof id !== "number") return false
    const c = this.running.get(id)
    if (c === undefined) return false
    this.running.delete(id)
    c.abort()
    return true
  }

  cancelAll(): void {
    for (const c of this.running.values()) c.abort()
    this.running.clear()
  }
}

/** One `initialize` handshake's worth of state: the negotiated version and what the client declared. */
export class LegacySession {
  version: string | undefined = undefined
  clientCapabilities: JsonObject = {}
  readonly inflight = new Inflight()
  private readonly pending = new Map<Id, (r: Response | undefined) => void>()
  private asked = 0

  constructor(readonly id: string) {}

  /** Server→client requests written through `write`; the reply comes back through `deliver`. */
  asker(write: (m: Message) => void): Ask {
    return (method, params, signal) =>
      new Promise((resolve) => {
        if (signal.aborted) return resolve(undefined)
        const id = `era-ask-${++this.asked}`
        const settle = (r: Response | undefined) => {
          signal.removeEventListener("abort", onAbort)
          this.pending.delete(id)
          resolve(r)
        }
        const onAbort = () => settle(undefined)
        signal.addEventListener("abort", onAbort, { once: true })
        this.pending.set(id, settle)
        write(request(id, method, params))
      })
  }

  /** Hands a client's response to the question waiting for it; false when nothing was. */
  deliver(r: Response): boolean {
    const settle = r.id === null ? undefined : this.pending.get(r.id)
    if (settle === undefined) return false
    settle(r)
    return true
  }

  close(): void {
    this.inflight.cancelAll()
    for (const settle of [...this.pending.values()]) settle(undefined)
  }
}
