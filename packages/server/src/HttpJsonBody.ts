/**
 * `/v1` takes JSON bodies only: a POST or PUT must say `Content-Type: application/json`, else 415.
 * Why it matters more than tidiness: a browser page sends a POST whose content type is absent,
 * `text/plain`, a form or multipart as a "simple" request, without a CORS preflight, and the Origin
 * policy lets any loopback origin through (a page on `http://127.0.0.1:3000` is one). Only a JSON
 * content type makes the browser ask first, and the preflight grants nothing to an origin not in
 * `transport.allowedOrigins`. So a body-less POST (`/v1/probe/{server}`) needs the header too.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Wire from "./internal/HttpWire.js"

/** The content type every `/v1` POST and PUT declares. */
export const JsonType = Wire.JsonType

const needsJson = (method: string): boolean => method === "POST" || method === "PUT"

/** The 415 a POST or PUT not declared JSON gets, with the `_tag` and `message` of `/v1`'s other 4xx bodies. */
export const unsupported = (found: string | undefined): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    {
      _tag: "UnsupportedMediaType",
      error: "unsupported media type",
      message: `a POST or PUT to /v1 needs Content-Type: application/json (got ${found === undefined ? "none" : JSON.stringify(found)})`
    },
    { status: 415, headers: { "accept-post": JsonType } }
  )

/** Wraps `app`: its POSTs and PUTs reach it only when declared JSON. */
export const requireJson = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    needsJson(request.method) && !Wire.isJsonBody(request)
      ? Effect.succeed(unsupported(Wire.header(request, "content-type")))
      : app)
