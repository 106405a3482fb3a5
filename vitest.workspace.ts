// The package projects vitest runs. The root vitest.config.ts reads this list, so vitest
// never loads this file as a workspace file itself (vitest 3.2 deprecates that path).
export const projects = [
  "packages/cancel/vitest.config.ts",
  "packages/protocol/vitest.config.ts",
  "packages/upstream/vitest.config.ts",
  "packages/server/vitest.config.ts",
  "packages/store/vitest.config.ts",
  "packages/fleet/vitest.config.ts",
  "packages/config/vitest.config.ts",
  "packages/gateway/vitest.config.ts",
  "packages/daemon/vitest.config.ts",
  "packages/cli/vitest.config.ts",
  "packages/testing/vitest.config.ts",
  "examples/vitest.config.ts"
]
