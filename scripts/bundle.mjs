// Bundles what must run under plain `node` (no tsx at run time):
//  - the CLI into one self-contained file, packages/cli/dist/mcpx-fx.js
//  - every test fixture entry point in packages/testing/src/bin/ into packages/testing/dist/,
//    with our workspace packages inlined and third-party packages left to node_modules.
import * as esbuild from "esbuild"
import { chmodSync, existsSync, readdirSync } from "node:fs"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const requireShim =
  "import { createRequire as __mcpxCreateRequire } from 'node:module';" +
  "const require = __mcpxCreateRequire(import.meta.url);"

// Our packages export their sources under this condition (dist/ is for the published tarballs),
// so a bundle is always built from src, with no tsc run in between.
const sourceConditions = ["@mcpx-fx/source"]

const common = {
  bundle: true,
  conditions: sourceConditions,
  // jsonc-parser's `main` is a UMD build whose lazy require()s esbuild cannot follow; its ESM build bundles cleanly.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
  legalComments: "none"
}

const cliEntry = join(root, "packages/cli/src/bin.ts")
if (existsSync(cliEntry)) {
  const outfile = join(root, "packages/cli/dist/mcpx-fx.js")
  await esbuild.build({
    ...common,
    entryPoints: [cliEntry],
    outfile,
    banner: { js: "#!/usr/bin/env node\n" + requireShim }
  })
  chmodSync(outfile, 0o755)
}

// Third-party packages stay external for fixtures: they are real peers (the official SDKs)
// and must run as their authors shipped them.
const externalThirdParty = {
  name: "external-third-party",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("@mcpx-fx/")) return undefined
      return { path: args.path, external: true }
    })
  }
}

const binDir = join(root, "packages/testing/src/bin")
if (existsSync(binDir)) {
  const entryPoints = readdirSync(binDir).filter((f) => f.endsWith(".ts")).map((f) => join(binDir, f))
  if (entryPoints.length > 0) {
    await esbuild.build({
      ...common,
      entryPoints,
      outdir: join(root, "packages/testing/dist"),
      banner: { js: requireShim },
      plugins: [externalThirdParty]
    })
  }
}

// Benchmarks run under plain node as well; they are bundled only when asked for (npm run bench).
if (process.argv.includes("--bench")) {
  const benchDir = join(root, "bench")
  const entryPoints = readdirSync(benchDir).filter((f) => f.endsWith(".ts")).map((f) => join(benchDir, f))
  await esbuild.build({
    ...common,
    entryPoints,
    outdir: join(benchDir, "dist"),
    banner: { js: requireShim },
    plugins: [externalThirdParty]
  })
}
