import * as path from "node:path"
import type { ViteUserConfig } from "vitest/config"

// Our packages export their TypeScript sources under this condition (and compiled dist/ otherwise),
// so tests run against src with no build step in between.
const conditions = ["@mcpx-fx/source"]

const config: ViteUserConfig = {
  esbuild: { target: "es2022" },
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    setupFiles: [path.join(__dirname, "vitest.setup.ts")],
    include: ["test/**/*.test.ts"],
    fakeTimers: { toFake: undefined },
    sequence: { concurrent: true },
    testTimeout: 30_000
  }
}

export default config
