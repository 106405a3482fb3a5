/**
 * bench/peers: what the bench measures mcpx-fx against that is not mcpx-fx's own (the peer
 * gateways, Effect 4 for bench:runtime), pinned in its own lockfile and kept out of the workspace
 * so its dependencies never mix with mcpx-fx's. Installed on first use.
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"

/** Installs bench/peers from its lockfile when `file` (a path inside it) is missing. */
export const ensurePeers = (root: string, file: string, log: (line: string) => void): void => {
  if (existsSync(file)) return
  log("bench: installing the peers (npm ci --prefix bench/peers)")
  const r = spawnSync("npm", ["ci", "--prefix", join(root, "bench/peers"), "--no-audit", "--no-fund"], { stdio: "inherit" })
  if (r.status !== 0) throw new Error("installing bench/peers failed")
}
