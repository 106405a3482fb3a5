/**
 * The live page's files, served by the daemon itself from these strings: no build step, nothing
 * fetched from anywhere at run time. The page (UiPage.ts) and its script (UiScript.ts) read
 * everything they show from `/v1`; OwnerAccess.ts decides who may.
 *
 * Every file goes with a policy that keeps the page to itself: scripts and styles from the daemon
 * only and no inline script (so nothing injected into the page could run), requests to the daemon
 * only, never framed, no Referer, never cached.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { css, html, icon } from "./UiPage.js"
import { js } from "./UiScript.js"

/** The Content-Security-Policy of every file of the page. */
export const ContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/** The headers every file of the page goes with. */
export const SecurityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": ContentSecurityPolicy,
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
}

const files: ReadonlyMap<string, { readonly body: string; readonly contentType: string }> = new Map([
  ["/ui", { body: html, contentType: "text/html; charset=utf-8" }],
  ["/ui/", { body: html, contentType: "text/html; charset=utf-8" }],
  ["/ui/app.js", { body: js, contentType: "text/javascript; charset=utf-8" }],
  ["/ui/app.css", { body: css, contentType: "text/css; charset=utf-8" }],
  ["/ui/icon.svg", { body: icon, contentType: "image/svg+xml" }]
])

/** The paths the page is served at; the daemon's router sends exactly these here. */
export const Paths: ReadonlySet<string> = new Set(files.keys())

/** Serves the page's files to GET and HEAD; anything else at these paths is a 405. */
export const app = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const file = files.get(request.url.split("?")[0] ?? "")
  if (file === undefined) return HttpServerResponse.unsafeJson({ error: "not found" }, { status: 404 })
  if (request.method !== "GET" && request.method !== "HEAD") {
    return HttpServerResponse.unsafeJson({ error: "method not allowed" }, { status: 405, headers: { allow: "GET, HEAD" } })
  }
  return HttpServerResponse.text(file.body, { contentType: file.contentType, headers: SecurityHeaders })
})
