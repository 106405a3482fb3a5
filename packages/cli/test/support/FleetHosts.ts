/**
 * Hosts for the fleet tests: the official SDK 2.x client pinned to 2026-07-28 (a person answering
 * its questions), whose POSTs a test may steer to one instance's port instead of nginx (so an
 * `input_required` retry provably lands on another instance than its first round), and the SDK 1.x
 * Streamable HTTP client (a legacy session).
 */
import { assert } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"

const clientInfo = { name: "fleet-test", version: "1.0.0" }

/** Where one POST went: the URL it was sent to and its JSON-RPC body. */
export interface Sent {
  readonly url: string
  readonly body: string
}

/**
 * Chooses the URL of each POST from its body (undefined: the client's own URL, nginx). Every POST
 * is recorded in `sent`.
 */
export type Steer = (body: string) => string | undefined

const bodyText = (init: RequestInit | undefined): string => (typeof init?.body === "string" ? init.body : "")

/** A call's first text block. */
export const textOf = (result: unknown): string => {
  const content = (result as { content?: ReadonlyArray<{ type: string; text?: string }> }).content
  assert.isArray(content, JSON.stringify(result))
  assert.strictEqual(content?.[0]?.type, "text", JSON.stringify(result))
  return String(content?.[0]?.text)
}

/** The SDK 2.x client pinned to 2026-07-28 at `url`, answering forms with "Grace" (and colors with "teal"). */
export const modernClient = (url: string, steer: Steer = () => undefined) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const sent: Array<Sent> = []
      const client = new ModernClient(clientInfo, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } })
      client.setRequestHandler("elicitation/create", (request) => {
        const schema = request.params.mode === "url" ? undefined : request.params.requestedSchema
        const fields = Object.keys(schema?.properties ?? {})
        return { action: "accept", content: Object.fromEntries(fields.map((f) => [f, f === "color" ? "teal" : "Grace"])) }
      })
      const transport = new ModernTransport(new URL(url), {
        fetch: (input, init) => {
          const body = bodyText(init)
          const target = steer(body) ?? String(input)
          sent.push({ url: target, body })
          return fetch(target, init)
        }
      })
      await client.connect(transport)
      return { client, sent }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

/** The SDK 1.x client with a session at `url`, answering elicitation with "Ada". */
export const legacyClient = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new LegacyClient(clientInfo, { capabilities: { elicitation: {} } })
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }))
      const transport = new LegacyTransport(new URL(url))
      await client.connect(transport)
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )
