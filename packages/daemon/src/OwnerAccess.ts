/**
 * The daemon's TCP edge with the owner secret (OwnerSecret.ts) in it, around the `/v1` and `/ui`
 * router. The unix socket makes its requests the owner's; a browser cannot reach it, so the live
 * page proves it is the owner's with `Authorization: Bearer <owner secret>` instead:
 *
 * - A request that carries the exact secret (compared in constant time) from a loopback peer is
 *   the owner's (`Redact.RawForOwner`), as on the socket. It still passes the Host and Origin
 *   policy; it needs no daemon token, since whoever holds the secret could read the token's file
 *   (or open the socket, which needs none) as well. From any other peer the secret counts for
 *   nothing: over a network it would travel in clear.
 * - The page's own files (`UiAssets.Paths`: markup, script, style; no data, no secret) are served
 *   under the Host and Origin policy without the token, since a browser's navigation cannot send
 *   one. Whatever the page then reads goes through `/v1` like any other request.
 * - Every other request meets the edge exactly as it would without any of this.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Redact from "@mcpx-fx/gateway/Redact"
import * as HttpEdge from "@mcpx-fx/server/HttpEdge"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash, timingSafeEqual } from "node:crypto"
import * as UiAssets from "./UiAssets.js"

const digest = (s: string): Buffer => createHash("sha256").update(s).digest()

/** Whether the peer is this machine: 127/8, ::1, or either as an IPv4-mapped address. */
export const isLoopbackPeer = (address: string): boolean => {
  const a = address.toLowerCase().replace(/^::ffff:/, "")
  return a === "::1" || /^127\.\d+\.\d+\.\d+$/.test(a)
}

/** Whether `header` is `Bearer <secret>`, in constant time over the digests. */
export const carriesSecret = (expected: Buffer, header: string | undefined): boolean => {
  const m = header === undefined ? null : /^\s*bearer\s+(\S+)\s*$/i.exec(header)
  return m !== null && m[1] !== undefined && timingSafeEqual(digest(m[1]), expected)
}

/** The edge of `options`, with the owner secret and the page's files as above. */
export const make = (options: HttpEdge.EdgeOptions & { readonly ownerSecret: string }) => {
  const everyone = HttpEdge.make(options)
  const tokenFree = HttpEdge.make({ ...options, token: undefined })
  const secret = digest(options.ownerSecret)
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const path = request.url.split("?")[0] ?? ""
      if (UiAssets.Paths.has(path) && (request.method === "GET" || request.method === "HEAD")) return tokenFree(app)
      const peer = Option.getOrUndefined(request.remoteAddress)
      const owner = peer !== undefined && isLoopbackPeer(peer) && carriesSecret(secret, request.headers["authorization"])
      return owner ? tokenFree(Effect.locally(app, Redact.RawForOwner, true)) : everyone(app)
    })
}
