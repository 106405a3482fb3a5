/**
 * A stock nginx (Debian's `nginx-light`) for the fleet tests, installed when missing.
 * `scripts/fleet.mjs` finds it at /usr/sbin/nginx.
 */
import * as DebianPackage from "./DebianPackage.js"

export const Binary = "/usr/sbin/nginx"

export const ensureInstalled = DebianPackage.ensure(Binary, "nginx-light")
