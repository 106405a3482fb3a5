/**
 * The tools the suite's `tasks-*` scenarios call (conformance 0.2.0-alpha.12), each with a task
 * body and a synchronous path:
 *
 * | tool | task support | behaviour |
 * |---|---|---|
 * | `greet` | none | `Hello, {name}!` at once; a `task` hint never makes it a task |
 * | `slow_compute` | optional | sleeps `seconds`, then reports; cancellable while it sleeps |
 * | `failing_job` | required | after ~1 s, a tool error (`isError`: the task still `completed`) |
 * | `protocol_error_job` | required | a JSON-RPC error (the task `failed`, with `error`) |
 * | `confirm_delete` | optional | asks one yes/no elicitation, then reports |
 * | `multi_input` | optional | asks two elicitations at once; answers may come one by one |
 * | `test_tool_with_task` | required | asks `user_name` by MRTR first, then greets it from a task |
 *
 * Whether a call becomes a task is decided by a gate in front of the SDK's own `tools/call`: on
 * 2026-07-28 the request must declare the extension (a required tool is `-32021` otherwise) and
 * the `task` hint is ignored; on 2025-11-25 the request asks with `params.task` (`-32601` for a
 * required tool called without it, or a hint on a tool without task support). On 2025-11-25 a
 * task's questions go out as `elicitation/create` requests tagged with the related-task `_meta`.
 */
import {
  acceptedContent,
  type CallToolResult,
  inputRequired,
  type InputRequiredResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext
} from "@modelcontextprotocol/server"
import * as z from "zod"
import { log } from "./Cli.js"
import { declaresElicitation, declaresExtension, legacyTask, missingExtension, modernHandle, pushStatus, RelatedTaskKey, TasksRevision } from "./TaskMethods.js"
import { type InputRequest, type Job, TaskFailure, type TaskStore } from "./TaskStore.js"
import type { SurfaceContext } from "./V2Host.js"

/** One task-capable tool, its argument type erased behind `schema`. */
interface TaskTool<A> {
  readonly name: string
  readonly description: string
  readonly schema: z.ZodType<A>
  readonly taskSupport: "optional" | "required"
  /** MRTR rounds before any task exists: an `input_required` result, or what the task needs. */
  readonly before?: (ctx: ServerContext) => InputRequiredResult | { readonly carry: string }
  readonly body: (args: A, job: Job, carry: string | undefined) => Promise<CallToolResult>
  /** The call served without a task (no extension, no hint, or a revision without tasks). */
  readonly sync: (args: A, ctx: ServerContext) => Promise<CallToolResult | InputRequiredResult>
}

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] })
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const boolean = { type: "object" as const, properties: { confirm: { type: "boolean" as const } }, required: ["confirm"] }
const named = { type: "object" as const, properties: { name: { type: "string" as const } }, required: ["name"] }
const elicit = (message: string, requestedSchema: typeof boolean | typeof named): InputRequest => ({
  method: "elicitation/create",
  params: { mode: "form", message, requestedSchema }
})
const accepted = (answer: Record<string, unknown> | undefined): Record<string, unknown> | undefined =>
  answer?.["action"] === "accept" && typeof answer["content"] === "object" && answer["content"] !== null
    ? (answer["content"] as Record<string, unknown>)
    : undefined

const Seconds = z.object({ seconds: z.number().min(0).max(300), label: z.string().optional() })
const Filename = z.object({ filename: z.string() })
const Nothing = z.object({})
const Confirm = z.object({ confirm: z.boolean() })
const Name = z.object({ name: z.string() })

const slowCompute: TaskTool<z.infer<typeof Seconds>> = {
  name: "slow_compute",
  description: "Sleeps `seconds`, then reports; becomes a task when the caller can take one",
  schema: Seconds,
  taskSupport: "optional",
  body: async ({ label, seconds }, job) => {
    await job.sleep(seconds * 1000)
    return text(`slow_compute${label === undefined ? "" : ` (${label})`} finished after ${seconds}s`)
  },
  sync: async ({ label, seconds }) => {
    await pause(seconds * 1000)
    return text(`slow_compute${label === undefined ? "" : ` (${label})`} finished after ${seconds}s`)
  }
}

const failingJob: TaskTool<z.infer<typeof Nothing>> = {
  name: "failing_job",
  description: "Runs for about a second, then reports a tool error (isError); only as a task",
  schema: Nothing,
  taskSupport: "required",
  body: async (_args, job) => {
    await job.sleep(1000)
    return { isError: true, content: [{ type: "text", text: "failing_job failed, as it always does" }] }
  },
  sync: async () => ({ isError: true, content: [{ type: "text", text: "failing_job failed, as it always does" }] })
}

const protocolErrorJob: TaskTool<z.infer<typeof Nothing>> = {
  name: "protocol_error_job",
  description: "Fails with a JSON-RPC internal error rather than a tool result; only as a task",
  schema: Nothing,
  taskSupport: "required",
  body: async (_args, job) => {
    await job.sleep(200)
    throw new TaskFailure({ code: ProtocolErrorCode.InternalError, message: "protocol_error_job broke at the protocol level" })
  },
  sync: async () => {
    throw new ProtocolError(ProtocolErrorCode.InternalError, "protocol_error_job broke at the protocol level")
  }
}

const deleted = (filename: string, confirm: boolean | undefined) => text(confirm === true ? `Deleted ${filename}` : `Kept ${filename}`)

const confirmDelete: TaskTool<z.infer<typeof Filename>> = {
  name: "confirm_delete",
  description: "Asks whether to delete a file (one elicitation), then reports",
  schema: Filename,
  taskSupport: "optional",
  body: async ({ filename }, job) => {
    const answers = await job.ask({ confirm_delete: elicit(`Delete ${filename}?`, boolean) })
    return deleted(filename, accepted(answers["confirm_delete"])?.["confirm"] === true)
  },
  sync: async ({ filename }, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm_delete", Confirm)
    if (answer !== undefined) return deleted(filename, answer.confirm)
    return inputRequired({ inputRequests: { confirm_delete: inputRequired.elicit({ message: `Delete ${filename}?`, requestedSchema: boolean }) } })
  }
}

const both = (first: Record<string, unknown> | undefined, second: Record<string, unknown> | undefined) =>
  text(`first=${JSON.stringify(first ?? null)}, second=${JSON.stringify(second ?? null)}`)

const multiInput: TaskTool<z.infer<typeof Nothing>> = {
  name: "multi_input",
  description: "Asks two questions at once; the task waits until both are answered",
  schema: Nothing,
  taskSupport: "optional",
  body: async (_args, job) => {
    const answers = await job.ask({
      multi_input_first: elicit("First: what is your name?", named),
      multi_input_second: elicit("Second: shall we go on?", boolean)
    })
    return both(accepted(answers["multi_input_first"]), accepted(answers["multi_input_second"]))
  },
  sync: async (_args, ctx) => {
    const first = acceptedContent(ctx.mcpReq.inputResponses, "multi_input_first", Name)
    const second = acceptedContent(ctx.mcpReq.inputResponses, "multi_input_second", Confirm)
    if (first !== undefined && second !== undefined) return both(first, second)
    return inputRequired({
      inputRequests: {
        ...(first === undefined ? { multi_input_first: inputRequired.elicit({ message: "First: what is your name?", requestedSchema: named }) } : {}),
        ...(second === undefined ? { multi_input_second: inputRequired.elicit({ message: "Second: shall we go on?", requestedSchema: boolean }) } : {})
      }
    })
  }
}

const askName = (ctx: ServerContext): InputRequiredResult | { readonly carry: string } => {
  const answer = acceptedContent(ctx.mcpReq.inputResponses, "user_name", Name)
  return answer !== undefined
    ? { carry: answer.name }
    : inputRequired({ inputRequests: { user_name: inputRequired.elicit({ message: "What is your name?", requestedSchema: named }) } })
}

const withTask: TaskTool<z.infer<typeof Nothing>> = {
  name: "test_tool_with_task",
  description: "Asks for a name by MRTR, then greets it from a task created on the final round",
  schema: Nothing,
  taskSupport: "required",
  before: askName,
  body: async (_args, job, name) => {
    await job.sleep(200)
    return text(`Hello, ${name ?? "stranger"}! (from task ${job.taskId})`)
  },
  sync: async (_args, ctx) => {
    const asked = askName(ctx)
    return isCarry(asked) ? text(`Hello, ${asked.carry}!`) : asked
  }
}

/** A tool as the gate drives it: arguments checked against the tool's own schema at each entry. */
interface Runnable {
  readonly name: string
  readonly description: string
  readonly schema: z.ZodType
  readonly taskSupport: "optional" | "required"
  readonly before: ((ctx: ServerContext) => InputRequiredResult | { readonly carry: string }) | undefined
  readonly body: (raw: unknown, job: Job, carry: string | undefined) => Promise<CallToolResult>
  readonly sync: (raw: unknown, ctx: ServerContext) => Promise<CallToolResult | InputRequiredResult>
}

const runnable = <A>(tool: TaskTool<A>): Runnable => ({
  name: tool.name,
  description: tool.description,
  schema: tool.schema,
  taskSupport: tool.taskSupport,
  before: tool.before,
  body: (raw, job, carry) => tool.body(argumentsOf(tool, raw), job, carry),
  sync: (raw, ctx) => tool.sync(argumentsOf(tool, raw), ctx)
})

const TOOLS: ReadonlyArray<Runnable> = [
  runnable(slowCompute),
  runnable(failingJob),
  runnable(protocolErrorJob),
  runnable(confirmDelete),
  runnable(multiInput),
  runnable(withTask)
]

type Handler = (request: unknown, ctx: ServerContext) => Promise<unknown>

/**
 * Puts `gate` in front of the handler the SDK stored for `method` on this instance, in the SDK's
 * own table, so the SDK's wrapping (request and result checks, the legacy MRTR shim, requestState
 * verification) still runs exactly once for every call the gate hands on. The SDK offers no
 * public way to read a stored handler back, so this reads its table, checking what it finds.
 */
const interpose = (mcp: McpServer, method: string, gate: (inner: Handler) => Handler): void => {
  const table: unknown = Reflect.get(mcp.server, "_requestHandlers")
  const handler: unknown = table instanceof Map ? table.get(method) : undefined
  if (!(table instanceof Map) || typeof handler !== "function") {
    throw new Error(`the SDK keeps no ${method} handler where the fixture looks for it`)
  }
  const inner: Handler = (request, ctx) => Promise.resolve(Reflect.apply(handler, mcp.server, [request, ctx]) as unknown)
  table.set(method, gate(inner))
}

function argumentsOf<A>(tool: TaskTool<A>, raw: unknown): A {
  const parsed = tool.schema.safeParse(raw ?? {})
  if (!parsed.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${tool.name}: ${parsed.error.message}`)
  return parsed.data
}

/** A job whose questions also go out as 2025-11-25 `elicitation/create` requests tied to the task. */
const legacyQuestions = (mcp: McpServer, store: TaskStore, fixture: string, job: Job): Job => ({
  ...job,
  ask: (requests) => {
    const answered = job.ask(requests)
    for (const [key, request] of Object.entries(requests)) {
      const params = { ...request.params, _meta: { [RelatedTaskKey]: { taskId: job.taskId } } } as Parameters<McpServer["server"]["elicitInput"]>[0]
      mcp.server
        .elicitInput(params)
        .then((answer) => store.update(job.taskId, { [key]: { ...answer } }))
        .catch((error: unknown) => log(fixture, `task ${job.taskId}: ${key} was not answered: ${String(error)}`))
    }
    return answered
  }
})

/**
 * Registers the task tools and, when every other tool is registered (call this last), puts the
 * task gate in front of `tools/call`.
 */
export const registerTaskTools = (mcp: McpServer, ctx: SurfaceContext, store: TaskStore): void => {
  mcp.registerTool(
    "greet",
    { description: "Greets by name; never a task", inputSchema: z.object({ name: z.string() }) },
    ({ name }) => text(`Hello, ${name}!`)
  )
  for (const tool of TOOLS) {
    const registered = mcp.registerTool(
      tool.name,
      { description: tool.description, inputSchema: tool.schema },
      (args, handlerCtx) => tool.sync(args, handlerCtx)
    )
    // Tool-level task support is 2025-11-25 vocabulary; the 2026 codec drops it from listings.
    registered.execution = { taskSupport: tool.taskSupport }
  }
  const byName = new Map(TOOLS.map((t) => [t.name, t]))

  const startTask = (tool: Runnable, args: unknown, carry: string | undefined, ttl: number | undefined) => {
    const record = store.create(
      (job) => tool.body(args, ctx.era === "legacy" ? legacyQuestions(mcp, store, ctx.fixture, job) : job, carry).then((r) => ({ ...r })),
      ttl
    )
    if (ctx.era === "legacy") pushStatus(mcp, store, ctx.fixture, record.taskId)
    return record
  }

  /**
   * The MRTR rounds before a task exists; on 2025-11-25 they are asked as `elicitation/create`
   * requests tied to the call that is still open (on its SSE stream over HTTP).
   */
  const prepare = async (
    tool: Runnable,
    handlerCtx: ServerContext
  ): Promise<{ readonly ask: InputRequiredResult } | { readonly ask: undefined; readonly carry: string | undefined }> => {
    const ready = tool.before?.(handlerCtx)
    if (ready === undefined || isCarry(ready)) return { ask: undefined, carry: ready?.carry }
    if (ctx.era === "modern") {
      // What the SDK checks for every other input_required: the request must be able to answer.
      if (!declaresElicitation(handlerCtx)) {
        throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, `${tool.name} asks by elicitation first`, {
          requiredCapabilities: { elicitation: {} }
        })
      }
      return { ask: ready }
    }
    const answers: Record<string, Record<string, unknown>> = {}
    for (const [key, request] of Object.entries(ready.inputRequests ?? {})) {
      answers[key] = { ...(await handlerCtx.mcpReq.elicitInput(request.params as Parameters<ServerContext["mcpReq"]["elicitInput"]>[0])) }
    }
    const again = tool.before?.({ ...handlerCtx, mcpReq: { ...handlerCtx.mcpReq, inputResponses: answers } })
    return { ask: undefined, carry: again !== undefined && isCarry(again) ? again.carry : undefined }
  }

  interpose(mcp, "tools/call", (inner) => async (request, handlerCtx) => {
    const params: Record<string, unknown> = isRecord(request) && isRecord(request["params"]) ? request["params"] : {}
    const tool = typeof params["name"] === "string" ? byName.get(params["name"]) : undefined
    const hint = params["task"]
    const legacyTasks = ctx.era === "legacy" && mcp.server.getNegotiatedProtocolVersion() === TasksRevision
    if (tool === undefined) {
      if (legacyTasks && hint !== undefined) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `${String(params["name"])} cannot run as a task`)
      return inner(request, handlerCtx)
    }
    const wantsTask = ctx.era === "modern" ? declaresExtension(handlerCtx) : legacyTasks && isRecord(hint)
    if (!wantsTask) {
      if (tool.taskSupport === "required" && ctx.era === "modern") throw missingExtension(tool.name)
      if (tool.taskSupport === "required" && legacyTasks) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `${tool.name} runs only as a task`)
      return inner(request, handlerCtx)
    }
    // Arguments are checked before anything is asked or any task exists.
    const args: unknown = params["arguments"] ?? {}
    const checked = tool.schema.safeParse(args)
    if (!checked.success) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${tool.name}: ${checked.error.message}`)
    const ready = await prepare(tool, handlerCtx)
    if (ready.ask !== undefined) return ready.ask
    const record = startTask(tool, args, ready.carry, isRecord(hint) && typeof hint["ttl"] === "number" ? hint["ttl"] : undefined)
    return ctx.era === "modern" ? modernHandle(record) : { task: legacyTask(record) }
  })
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const isCarry = (ready: InputRequiredResult | { readonly carry: string }): ready is { readonly carry: string } =>
  "carry" in ready && typeof ready.carry === "string"
