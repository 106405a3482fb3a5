// Bundles what must run under plain `node` (no tsx at run time):
//  - the CLI into packages/cli/dist/mcpx-fx.js (the entry) and dist/mcpx-fx-main.cjs (the rest)
//  - every test fixture entry point in packages/testing/src/bin/ into packages/testing/dist/,
//    with our workspace packages inlined and third-party packages left to node_modules.
import * as esbuild from "esbuild"
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
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

// @effect/platform-node's HTTP server imports ws at its top for WebSocket upgrades, which mcpx-fx
// never accepts; it constructs a WebSocketServer only when a request asks to upgrade. So its
// import of ws is a stand-in that loads ws then: evaluating ws (and node:zlib, node:https it pulls
// in) at the start was ~2 MB of a daemon's heap and external memory, kept for its whole life.
const lazyWs = {
  name: "lazy-ws",
  setup(build) {
    const importer = /@effect[\\/]platform-node[\\/]dist[\\/]esm[\\/]internal[\\/]httpServer\.js$/
    build.onResolve({ filter: /^ws$/ }, (args) =>
      importer.test(args.importer) ? { path: args.resolveDir, namespace: "lazy-ws" } : undefined)
    build.onLoad({ filter: /.*/, namespace: "lazy-ws" }, (args) => ({
      resolveDir: args.path,
      loader: "js",
      contents: "export class WebSocketServer {\n" +
        "  constructor(options) { const Real = require(\"ws\").WebSocketServer; return new Real(options) }\n" +
        "}\n"
    }))
  }
}

// Effect keeps every root fiber (each request the daemon serves runs in one) in one Set for the
// life of the process, adding and deleting one per request. V8 links a Set's replaced table to its
// replacement, so that long-lived Set's old tables kept the young ones alive through scavenges,
// with the fibers in them and all they held, until the next full collection (see
// packages/cancel/src/InFlight.ts, and docs/performance.md: ~1 KB of every call promoted). The roots are kept
// in a linked list instead (`Members`), which `Fiber.roots` reads the same way. The build fails if
// Effect's code is no longer as expected, rather than quietly keeping the Set.
const fiberScopeSource = /effect[\\/]dist[\\/]esm[\\/]internal[\\/]fiberScope\.js$/
const inFlightModule = join(root, "packages/cancel/src/InFlight.ts")
const rootsAsMembers = {
  name: "roots-as-members",
  setup(build) {
    let patched = false
    build.onLoad({ filter: fiberScopeSource }, (args) => {
      const text = readFileSync(args.path, "utf8")
      const before = "roots = /*#__PURE__*/new Set();\n  add(_runtimeFlags, child) {\n    this.roots.add(child);\n    child.addObserver(() => {\n      this.roots.delete(child);\n    });\n  }"
      if (!text.includes(before)) throw new Error(`${args.path}: Effect's Global fiber scope is not as roots-as-members expects`)
      patched = true
      return {
        loader: "js",
        contents: `import { Members as __McpxMembers } from ${JSON.stringify(inFlightModule)};\n` +
          text.replace(before, "roots = new __McpxMembers();\n  add(_runtimeFlags, child) {\n    child.addObserver(this.roots.add(child));\n  }")
      }
    })
    build.onEnd((result) => {
      if (result.errors.length === 0 && !patched) throw new Error("roots-as-members: Effect's fiberScope.js was never loaded")
    })
  }
}

// The CLI is two files: a small ESM entry (dist/mcpx-fx.js) that answers `--version` alone and
// otherwise runs the CLI from dist/mcpx-fx-main.cjs through V8's code cache (see bin.ts), and that
// bundle, in CommonJS because only a script (not an ES module) can be compiled from cached data
// on Node 20. A build removes the caches of earlier builds.
const cliEntry = join(root, "packages/cli/src/bin.ts")
if (existsSync(cliEntry)) {
  const outdir = join(root, "packages/cli/dist")
  if (existsSync(outdir)) {
    for (const f of readdirSync(outdir)) if (f.endsWith(".cache")) rmSync(join(outdir, f), { force: true })
  }
  rmSync(join(outdir, "chunks"), { recursive: true, force: true })
  const main = join(outdir, "mcpx-fx-main.cjs")
  await esbuild.build({
    ...common,
    entryPoints: [join(root, "packages/cli/src/Main.ts")],
    outfile: main,
    format: "cjs",
    // better-sqlite3 is a native addon (the embedded task store): it is the package's one runtime
    // dependency, loaded from node_modules. pg asks for pg-native only when told to use it.
    external: ["better-sqlite3", "pg-native"],
    plugins: [lazyWs, rootsAsMembers],
    // Whitespace only: a smaller source to read, keep and hash (~1.7 MB less peak RSS for a
    // one-shot command); names stay, so stack traces and the linked source map still read well.
    minifyWhitespace: true,
    // bin.ts compiles this text as is: the CommonJS wrapper is part of the file, so the source V8
    // keeps for the process's life is this one string and not a copy with the wrapper around it.
    // A CommonJS bundle has no import.meta; the code's few uses get the bundle's own URL.
    define: { "import.meta.url": "__mcpxImportMetaUrl" },
    banner: {
      js: "(function (exports, require, module, __filename, __dirname) {" +
        "var __mcpxImportMetaUrl = require('node:url').pathToFileURL(__filename).href;"
    },
    footer: { js: "})" }
  })
  // One non-ASCII character makes V8 keep the whole source as two-byte text, twice the memory.
  // esbuild escapes every non-ASCII character in code; what is left is in comments it kept.
  const text = readFileSync(main, "utf8")
  if (/[^\x00-\x7f]/.test(text)) writeFileSync(main, text.replace(/[^\x00-\x7f]/g, "?"))
  await esbuild.build({
    ...common,
    entryPoints: [cliEntry],
    outfile: join(outdir, "mcpx-fx.js")
  })
  chmodSync(join(outdir, "mcpx-fx.js"), 0o755)
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
