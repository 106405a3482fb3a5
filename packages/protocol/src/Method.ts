/**
 * MCP method names, and which revision has which.
 *
 * The sets matter to a dual-era server: a method that exists only in the legacy era (`initialize`,
 * `ping`, `logging/setLevel`, `resources/subscribe`) is `-32601` when it arrives with a modern
 * envelope, and a modern-only method (`server/discover`, `subscriptions/listen`) is unknown to a
 * legacy session.
 */
import { atLeast, isModernRevision, type Revision } from "./Revision.js"

// Lifecycle
/** Legacy handshake request. */
export const Initialize = "initialize"
/** Legacy handshake completion notification. */
export const Initialized = "notifications/initialized"
/** Legacy liveness check (either direction). */
export const Ping = "ping"
/** Modern capability and version discovery. */
export const ServerDiscover = "server/discover"

// Server features
/** List tools. */
export const ToolsList = "tools/list"
/** Call a tool. */
export const ToolsCall = "tools/call"
/** List resources. */
export const ResourcesList = "resources/list"
/** List resource templates. */
export const ResourcesTemplatesList = "resources/templates/list"
/** Read a resource. */
export const ResourcesRead = "resources/read"
/** Legacy per-URI subscription. */
export const ResourcesSubscribe = "resources/subscribe"
/** Legacy per-URI unsubscription. */
export const ResourcesUnsubscribe = "resources/unsubscribe"
/** List prompts. */
export const PromptsList = "prompts/list"
/** Get a prompt. */
export const PromptsGet = "prompts/get"
/** Argument completion. */
export const CompletionComplete = "completion/complete"
/** Legacy per-session log level. */
export const LoggingSetLevel = "logging/setLevel"
/** Modern notification stream (replaces the GET stream and resources/subscribe). */
export const SubscriptionsListen = "subscriptions/listen"

// Client features (server → client requests in legacy, MRTR input requests in modern)
/** Ask the user for input. */
export const ElicitationCreate = "elicitation/create"
/** Ask the client to sample an LLM. */
export const SamplingCreateMessage = "sampling/createMessage"
/** Ask the client for its roots. */
export const RootsList = "roots/list"

// Tasks: 2025-11-25 core and the 2026 extension share get/cancel names
/** Poll a task. */
export const TasksGet = "tasks/get"
/** Fetch a finished task's result (2025-11-25 only). */
export const TasksResult = "tasks/result"
/** List tasks (2025-11-25 only). */
export const TasksList = "tasks/list"
/** Cancel a task. */
export const TasksCancel = "tasks/cancel"
/** Answer a task's input requests (2026 tasks extension). */
export const TasksUpdate = "tasks/update"

// Notifications
/** Cancel an in-flight request (stdio and legacy sessions). */
export const NotificationsCancelled = "notifications/cancelled"
/** Progress for a request that carried a progressToken. */
export const NotificationsProgress = "notifications/progress"
/** A log message. */
export const NotificationsMessage = "notifications/message"
/** The tool list changed. */
export const NotificationsToolsListChanged = "notifications/tools/list_changed"
/** The prompt list changed. */
export const NotificationsPromptsListChanged = "notifications/prompts/list_changed"
/** The resource list changed. */
export const NotificationsResourcesListChanged = "notifications/resources/list_changed"
/** A subscribed resource changed. */
export const NotificationsResourcesUpdated = "notifications/resources/updated"
/** The client's roots changed (legacy only). */
export const NotificationsRootsListChanged = "notifications/roots/list_changed"
/** The first message of a subscriptions/listen stream. */
export const NotificationsSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
/** A URL-mode elicitation finished (2025-11-25 only). */
export const NotificationsElicitationComplete = "notifications/elicitation/complete"
/** Task status push (2025-11-25 core tasks). */
export const NotificationsTasksStatus = "notifications/tasks/status"
/** Task state push (2026 tasks extension). */
export const NotificationsTasks = "notifications/tasks"

/** Client requests every legacy revision has (2024-11-05 baseline). */
export const LegacyBaseClientRequests: ReadonlyArray<string> = [
  Initialize,
  Ping,
  ToolsList,
  ToolsCall,
  ResourcesList,
  ResourcesTemplatesList,
  ResourcesRead,
  ResourcesSubscribe,
  ResourcesUnsubscribe,
  PromptsList,
  PromptsGet,
  CompletionComplete,
  LoggingSetLevel
]

/** Client requests added by 2025-11-25 (experimental core tasks). */
export const LegacyTaskClientRequests: ReadonlyArray<string> = [TasksGet, TasksResult, TasksList, TasksCancel]

/** Client requests of the modern core (2026-07-28). */
export const ModernClientRequests: ReadonlyArray<string> = [
  ServerDiscover,
  CompletionComplete,
  PromptsGet,
  PromptsList,
  ResourcesList,
  ResourcesTemplatesList,
  ResourcesRead,
  SubscriptionsListen,
  ToolsCall,
  ToolsList
]

/** Client requests the 2026 tasks extension adds, when both sides declare it. */
export const TasksExtensionClientRequests: ReadonlyArray<string> = [TasksGet, TasksUpdate, TasksCancel]

/** Methods that exist only in the legacy era: with a modern envelope they are `-32601`. */
export const LegacyOnlyClientRequests: ReadonlyArray<string> = [
  Initialize,
  Ping,
  LoggingSetLevel,
  ResourcesSubscribe,
  ResourcesUnsubscribe
]

/**
 * Whether `method` is a client request of `revision`'s core protocol. The modern tasks extension is
 * not core: ask `TasksExtensionClientRequests` when both sides declared it.
 */
export const isClientRequestIn = (revision: Revision, method: string): boolean =>
  isModernRevision(revision)
    ? ModernClientRequests.includes(method)
    : LegacyBaseClientRequests.includes(method) ||
      (atLeast(revision, "2025-11-25") && LegacyTaskClientRequests.includes(method))

/** Methods whose modern results carry `ttlMs` and `cacheScope`. */
export const CacheableMethods: ReadonlyArray<string> = [
  ServerDiscover,
  ToolsList,
  PromptsList,
  ResourcesList,
  ResourcesTemplatesList,
  ResourcesRead
]

/** Whether a method's complete modern result must carry caching hints. */
export const isCacheable = (method: string): boolean => CacheableMethods.includes(method)

/** The only methods a modern server may answer with `input_required`. */
export const InputRequiredMethods: ReadonlyArray<string> = [ToolsCall, PromptsGet, ResourcesRead]

/** Whether a method may be answered with `input_required`. */
export const allowsInputRequired = (method: string): boolean => InputRequiredMethods.includes(method)

/**
 * The 2025-11-25 task methods the 2026 extension dropped: with a modern envelope they are `-32601`,
 * whether or not the request declared the extension.
 */
export const TasksRemovedByExtension: ReadonlyArray<string> = [TasksResult, TasksList]

/**
 * Whether a modern request names a tasks-extension method. Such a request is served only when it
 * declared the extension itself; otherwise it is `-32021`, never `-32601`.
 */
export const isTasksExtensionRequest = (method: string): boolean => TasksExtensionClientRequests.includes(method)
