/**
 * The tools, prompts and resources the official conformance suite's server scenarios call
 * (`@modelcontextprotocol/conformance` 0.2.0-alpha.12), written for `@modelcontextprotocol/server`
 * 2.x by reading what each scenario checks, plus the greeting tools every SDK fixture has.
 *
 * Every question a tool asks is written once, the 2026 way (`inputRequired(...)`): a modern
 * request gets `input_required` (MRTR) and retries with `inputResponses`/`requestState`, and on
 * a 2025-era connection the SDK's legacy shim sends the same questions as real server→client
 * requests (`elicitation/create`, `sampling/createMessage`, `roots/list`) and re-enters the
 * handler. That is also what keeps the `test_input_required_result_*` names meaningful on the
 * legacy-only variant, where a gateway has to translate them for a modern host.
 *
 * The parts live in Conformance{Tools,Questions,Mrtr,Prompts,Resources}.ts; this file puts them
 * together, with the state one process keeps for all its instances.
 */
import { randomBytes } from "node:crypto"
import { createRequestStateCodec, McpServer } from "@modelcontextprotocol/server"
import { type FlowState, registerMrtrTools } from "./ConformanceMrtr.js"
import { registerPrompts } from "./ConformancePrompts.js"
import { registerQuestionTools } from "./ConformanceQuestions.js"
import { registerResources } from "./ConformanceResources.js"
import { registerContentTools } from "./ConformanceTools.js"
import { registerGreetings } from "./Greetings.js"
import { registerTaskMethods } from "./TaskMethods.js"
import { TaskStore } from "./TaskStore.js"
import { registerTaskTools } from "./TaskTools.js"
import type { Surface } from "./V2Host.js"

export const conformanceSurface = (): Surface => {
  // One key per process: every round of a flow comes back to this process (HTTP) or never
  // leaves it (the legacy shim re-enters in-process), and a restart invalidates old flows.
  const codec = createRequestStateCodec<FlowState>({ key: randomBytes(32), ttlSeconds: 600 })
  // One task table per process: a modern HTTP request gets a fresh instance, its tasks/get another.
  const tasks = new TaskStore({ ttlMs: 300_000, pollIntervalMs: 200, pageSize: 20 })

  return (ctx) => {
    const mcp = new McpServer(
      { name: ctx.fixture, version: "1.0.0" },
      { capabilities: { logging: {} }, requestState: { verify: codec.verify } }
    )
    registerGreetings(mcp, ctx)
    registerContentTools(mcp, ctx)
    registerQuestionTools(mcp)
    registerMrtrTools(mcp, codec)
    registerPrompts(mcp)
    registerResources(mcp, ctx.era)
    registerTaskMethods(mcp, ctx.era, tasks)
    // Last: the task gate takes over tools/call from what McpServer installed for every tool above.
    registerTaskTools(mcp, ctx, tasks)
    return mcp
  }
}
