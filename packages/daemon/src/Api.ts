/**
 * The `/v1` HTTP API as an @effect/platform `HttpApi`: the routes, the Schemas of every request and
 * response, and the errors with their HTTP statuses. The same definition serves the daemon
 * (ApiHandlers.ts), gives `/v1/openapi.json`, and gives the CLI a typed client
 * (`HttpApiClient.make(Api)`), so the CLI's `--json` output and the API's bodies are one shape.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { BadArguments, UpstreamFailed } from "./ApiErrors.js"
import { CallerHeaders } from "./ApiCaller.js"
import { AskGroup } from "./AskApi.js"
import { CallsGroup } from "./CallsApi.js"
import { TaskAccepted, TasksGroup, TasksUnavailable } from "./TasksApi.js"
import { UnknownName } from "@mcpx-fx/gateway/GatewayModel"
import { InvalidSettingValue, SetResult, SettingRow, UnknownSetting, UnsetResult } from "@mcpx-fx/config/SettingsModel"

// ---------------------------------------------------------------------------------------------
// What the daemon tells the API about itself
// ---------------------------------------------------------------------------------------------

/** The running daemon, as `/v1/health` and `/v1/status` report it; the daemon provides it. */
export class DaemonInfo extends Context.Tag("@mcpx-fx/daemon/Api/DaemonInfo")<DaemonInfo, {
  readonly version: string
  readonly pid: number
  /** Epoch milliseconds; uptime is measured against the Clock. */
  readonly startedAt: number
  /** Where the TCP listener ended up, once known. */
  readonly address?: string
  readonly port?: number
  /** The owner-only unix socket. */
  readonly socket?: string
  /** The config files loaded, nearest first. */
  readonly configFiles?: ReadonlyArray<string>
}>() {
  static readonly layer = (info: DaemonInfo["Type"]): Layer.Layer<DaemonInfo> => Layer.succeed(DaemonInfo, info)
}

/** The caller's revision header of `/v1/call` and `/v1/ask` (see ApiCaller.ts). */
export { CallerHeaders }

// Errors with their statuses live in ApiErrors.ts, so AskApi.ts can use them without a cycle.
export { BadArguments, UpstreamFailed } from "./ApiErrors.js"

// ---------------------------------------------------------------------------------------------
// Bodies (ApiBodies.ts)
// ---------------------------------------------------------------------------------------------

import {
  CallRequest,
  CallResponse,
  EventsQuery,
  Health,
  ProbeResult,
  ProtocolReport,
  SearchListing,
  SearchQuery,
  SearchRequest,
  ServersListing,
  SetRequest,
  SettingsListing,
  Status,
  ToolsListing
} from "./ApiBodies.js"

const ServerPathParam = Schema.Struct({ server: Schema.String })

const SettingPathParam = Schema.Struct({ path: Schema.String })

/** The SSE body of `/v1/events`, as OpenAPI describes it. */
const EventStream = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" }),
  Schema.annotations({ description: "SSE: `event: <type>` and `data: <LifecycleEvent JSON>` frames, `:` keep-alive comments" })
)

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

/** Health and status of the daemon. */
export class SystemGroup extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Health))
  .add(HttpApiEndpoint.get("status", "/status").addSuccess(Status))
  .add(HttpApiEndpoint.get("servers", "/servers").addSuccess(ServersListing))
  .add(HttpApiEndpoint.get("protocol", "/protocol").addSuccess(ProtocolReport))
  .add(
    HttpApiEndpoint.post("probe", "/probe/:server")
      .setPath(ServerPathParam)
      .addSuccess(ProbeResult)
      .addError(UnknownName, { status: 404 })
      .addError(UpstreamFailed)
  )
{}

/** Tools and calls. */
export class ToolsGroup extends HttpApiGroup.make("tools")
  .add(
    HttpApiEndpoint.get("list", "/tools")
      .setUrlParams(Schema.Struct({ ns: Schema.optionalWith(Schema.String, { exact: true }) }))
      .addSuccess(ToolsListing)
      .addError(UnknownName, { status: 404 })
  )
  .add(HttpApiEndpoint.get("search", "/search").setUrlParams(SearchQuery).addSuccess(SearchListing))
  // A search that may start servers (`refresh`) is a POST, never a GET (see SearchQuery).
  .add(HttpApiEndpoint.post("searchFresh", "/search").setPayload(SearchRequest).addSuccess(SearchListing))
  .add(
    HttpApiEndpoint.post("call", "/call")
      .setPayload(CallRequest)
      .setHeaders(CallerHeaders)
      .addSuccess(CallResponse)
      .addSuccess(TaskAccepted, { status: 202 })
      .addError(UnknownName, { status: 404 })
      .addError(BadArguments)
      .addError(UpstreamFailed)
      .addError(TasksUnavailable)
  )
{}

/** The settings registry and runtime overrides. */
export class SettingsGroup extends HttpApiGroup.make("settings")
  .add(HttpApiEndpoint.get("list", "/settings").addSuccess(SettingsListing))
  .add(
    HttpApiEndpoint.get("get", "/settings/:path")
      .setPath(SettingPathParam)
      .addSuccess(SettingRow)
      .addError(UnknownSetting, { status: 404 })
  )
  .add(
    HttpApiEndpoint.put("set", "/settings/:path")
      .setPath(SettingPathParam)
      .setPayload(SetRequest)
      .addSuccess(SetResult)
      .addError(UnknownSetting, { status: 404 })
      .addError(InvalidSettingValue, { status: 400 })
  )
  .add(
    HttpApiEndpoint.del("unset", "/settings/:path")
      .setPath(SettingPathParam)
      .addSuccess(UnsetResult)
      .addError(UnknownSetting, { status: 404 })
  )
{}

/** Lifecycle events as a stream. */
export class EventsGroup extends HttpApiGroup.make("events")
  .add(HttpApiEndpoint.get("events", "/events").setUrlParams(EventsQuery).addSuccess(EventStream))
{}

/** The whole `/v1` API. */
export class Api extends HttpApi.make("mcpx")
  .add(SystemGroup)
  .add(ToolsGroup)
  .add(SettingsGroup)
  .add(EventsGroup)
  .add(AskGroup)
  .add(TasksGroup)
  .add(CallsGroup)
  .prefix("/v1")
  .annotate(OpenApi.Title, "mcpx-fx")
  .annotate(OpenApi.Description, "The mcpx-fx daemon's HTTP API, beside the MCP endpoint /mcp.")
{}

/** Where the OpenAPI document is served. */
export const OpenApiPath = "/v1/openapi.json" as const
