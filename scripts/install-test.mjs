// The install test: mcpx-fx as a user gets it from npm. Packs every published package (`npm pack`),
// checks what each tarball holds, installs the tarballs into an empty directory outside the
// repository (third-party packages from the npm cache, or the registry when missing), and from
// there runs `npx mcpx-fx --version`, `tools` and a short `serve` exchange against a fixture
// config, then type-checks and runs examples/embedded-gateway.ts against the installed libraries.
//
// `npm run test:install`; `.ci/run` runs it after the build. MCPX_INSTALL_TEST_KEEP=1 keeps the
// temporary directory for a look afterwards.
import { spawn, spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const started = Date.now()
const say = (line) => process.stdout.write(`install-test: ${line}\n`)
const fail = (line) => {
  say(`FAILED: ${line}`)
  process.exitCode = 1
  throw new Error(line)
}
const check = (ok, what) => {
  if (!ok) fail(what)
}

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"))
const published = ["cancel", "protocol", "upstream", "server", "store", "config", "gateway", "daemon", "cli"]
const manifests = Object.fromEntries(published.map((p) => [p, readJson(join(root, "packages", p, "package.json"))]))
const version = manifests.cli.version
const repoVersion = (name) => readJson(join(root, "node_modules", name, "package.json")).version

// npm hands its own configuration to scripts as npm_* variables (the workspace, the prefix); the
// children here must behave as in a fresh shell, so none of it is passed on.
const cleanEnv = (extra = {}) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))),
  ...extra
})

const run = (command, args, options = {}) => {
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options })
  if (r.error) fail(`${command} ${args.join(" ")}: ${r.error.message}`)
  return { code: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" }
}

const runOk = (what, command, args, options) => {
  const r = run(command, args, options)
  if (r.code !== 0) fail(`${what} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  return r
}

const work = realpathSync(mkdtempSync(join(tmpdir(), "mcpx-fx-install-")))
const packs = join(work, "packs")
const app = join(work, "app")
const home = join(work, "home")
for (const dir of [packs, app, home]) mkdirSync(dir, { recursive: true })

try {
  // -------------------------------------------------------------------------------------------
  // The tarballs
  // -------------------------------------------------------------------------------------------
  const packed = JSON.parse(
    runOk(
      "npm pack",
      "npm",
      ["pack", ...published.flatMap((p) => ["--workspace", `packages/${p}`]), "--pack-destination", packs, "--json"],
      { cwd: root, env: cleanEnv() }
    ).stdout
  )
  check(packed.length === published.length, `npm pack made ${packed.length} tarballs, expected ${published.length}`)
  for (const tarball of packed) {
    const files = tarball.files.map((f) => f.path)
    const has = (f) => files.includes(f)
    const name = tarball.name
    check(has("package.json") && has("LICENSE") && has("README.md"), `${name}: package.json, LICENSE and README.md are packed`)
    check(!files.some((f) => /^(test|build)\/|tsconfig|vitest|\.tsbuildinfo/.test(f)), `${name}: no tests, builds or configs: ${files.join(", ")}`)
    const dir = published.find((p) => manifests[p].name === name)
    const manifest = readJson(join(root, "packages", dir, "package.json"))
    check(manifest.private !== true, `${name} is not private`)
    check(manifest.version === version, `${name} is at ${manifest.version}, the CLI at ${version}`)
    check(manifest.license === "MIT" && manifest.engines?.node !== undefined, `${name} names its license and engines`)
    // npm shows these as the package's links, and `npm repo`/`npm home` open them.
    check(
      manifest.repository?.url === "git+https://github.com/mcpx-fx/mcpx-fx.git" && manifest.repository?.directory === `packages/${dir}` &&
        manifest.homepage?.startsWith("https://github.com/mcpx-fx/mcpx-fx") === true,
      `${name} names its repository (with its directory) and homepage`
    )
    if (name === "mcpx-fx") {
      // better-sqlite3 (the embedded task store) is a native addon, which no bundle can hold.
      check(
        Object.keys(manifest.dependencies ?? {}).join() === "better-sqlite3",
        `mcpx-fx's one runtime dependency is better-sqlite3 (its bundle holds the rest): ${Object.keys(manifest.dependencies ?? {}).join(", ")}`
      )
      check(has("bin/mcpx-fx.js") && has("dist/mcpx-fx.js") && has("dist/mcpx-fx-main.cjs"), `mcpx-fx packs its bin and bundle: ${files.join(", ")}`)
      check(!files.some((f) => f.startsWith("src/")), `mcpx-fx packs no sources`)
    } else {
      check(has("dist/index.js") && has("dist/index.d.ts"), `${name} packs compiled JavaScript with declarations`)
      for (const dep of Object.keys(manifest.dependencies ?? {})) {
        if (dep.startsWith("@mcpx-fx/")) check(manifest.dependencies[dep] === version, `${name} depends on ${dep}@${version} exactly`)
      }
    }
    say(`packed ${tarball.filename} (${files.length} files, ${Math.round(tarball.size / 1024)} kB)`)
  }

  // -------------------------------------------------------------------------------------------
  // An empty project that installs them
  // -------------------------------------------------------------------------------------------
  for (let dir = dirname(app); dir !== dirname(dir); dir = dirname(dir)) {
    check(!existsSync(join(dir, "node_modules", "@mcpx-fx")), `${dir}/node_modules/@mcpx-fx would shadow the installed packages`)
  }
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "mcpx-fx-install-test", private: true, type: "module" }, null, 2))
  const tarballs = published.map((p) => join(packs, packed.find((t) => t.name === manifests[p].name).filename))
  // The example's own imports, at the versions the repository is tested with.
  const thirdParty = ["effect", "@effect/platform", "@effect/platform-node", "typescript", "@types/node"].map((n) => `${n}@${repoVersion(n)}`)
  const installing = Date.now()
  runOk("npm install", "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs, ...thirdParty], {
    cwd: app,
    env: cleanEnv()
  })
  const lock = readJson(join(app, "package-lock.json"))
  for (const p of published) {
    const entry = lock.packages[`node_modules/${manifests[p].name}`]
    check(entry?.resolved?.startsWith("file:") === true, `${manifests[p].name} was installed from its tarball (${entry?.resolved})`)
  }
  say(`installed the tarballs into ${app} in ${((Date.now() - installing) / 1000).toFixed(1)}s`)

  // The fixture is self-contained (node built-ins only), so the config names a file in the project.
  const fixture = join(app, "packages/testing/dist/era-server.js")
  mkdirSync(dirname(fixture), { recursive: true })
  copyFileSync(join(root, "packages/testing/dist/era-server.js"), fixture)
  writeFileSync(
    join(app, "mcp.json"),
    JSON.stringify({
      mcpServers: {
        legacy: { command: process.execPath, args: [fixture, "--mode", "legacy-32601"] },
        modern: { command: process.execPath, args: [fixture, "--mode", "modern-only"] }
      }
    }, null, 2)
  )
  const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: join(home, ".config"), MCPX_STATE_DIR: join(work, "state") })
  // `--yes=false`: use the installed mcpx-fx, never fetch one.
  const npx = (args, options = {}) => run("npx", ["--yes=false", "mcpx-fx", ...args], { cwd: app, env, ...options })

  // -------------------------------------------------------------------------------------------
  // The CLI, as `npx mcpx-fx`
  // -------------------------------------------------------------------------------------------
  const v = npx(["--version"])
  check(v.code === 0 && v.stdout.trim() === version, `npx mcpx-fx --version prints ${version}: got ${JSON.stringify(v)}`)
  say(`npx mcpx-fx --version: ${v.stdout.trim()}`)

  // `npm install -g`: the CLI tarball alone, into a prefix of its own.
  const globalPrefix = join(work, "global")
  // Without install scripts: better-sqlite3's native build was just proven by the install above
  // (and `serve` ran on it); building it again here would only add the ~85 s of compiling SQLite.
  runOk("npm install -g", "npm", ["install", "-g", "--prefix", globalPrefix, "--no-audit", "--no-fund", "--offline", "--ignore-scripts", tarballs.at(-1)], {
    cwd: work,
    env: cleanEnv()
  })
  const g = run(join(globalPrefix, "bin", "mcpx-fx"), ["--version"], { cwd: work, env })
  check(g.code === 0 && g.stdout.trim() === version, `mcpx-fx --version after npm install -g prints ${version}: got ${JSON.stringify(g)}`)
  say(`npm install -g: ${join(globalPrefix, "bin", "mcpx-fx")} --version: ${g.stdout.trim()}`)

  const tools = npx(["tools", "--config", "mcp.json"])
  check(tools.code === 0, `npx mcpx-fx tools exits 0: ${JSON.stringify(tools)}`)
  for (const tool of ["legacy__hello", "modern__hello"]) check(new RegExp(`^${tool} `, "m").test(tools.stdout), `tools lists ${tool}:\n${tools.stdout}`)
  say(`npx mcpx-fx tools: ${tools.stdout.trim().split("\n").length - 1} tools`)

  const frames = await serveExchange(app, env)
  const init = frames.find((f) => f.id === 1)
  check(init?.result?.serverInfo?.name === "mcpx-fx" && init.result.serverInfo.version === version, `serve answers initialize as mcpx-fx ${version}: ${JSON.stringify(init)}`)
  const listed = frames.find((f) => f.id === 2)?.result?.tools?.map((t) => t.name) ?? []
  check(listed.includes("legacy__hello") && listed.includes("modern__hello"), `serve lists both servers' tools: ${listed.join(", ")}`)
  const called = JSON.stringify(frames.find((f) => f.id === 3))
  check(called.includes("over legacy 2025-11-25"), `serve routes legacy__hello to the legacy server: ${called}`)
  const modern = JSON.stringify(frames.find((f) => f.id === 4))
  check(modern.includes("over modern"), `serve routes modern__hello to the modern server: ${modern}`)
  const tasked = JSON.stringify(frames.find((f) => f.id === 6))
  check(tasked.includes("over legacy 2025-11-25") && tasked.includes("related-task"), `serve runs a task on the installed store and tasks/result answers it: ${tasked}`)
  say("npx mcpx-fx serve: initialize, tools/list, two routed tools/call and a task (tasks/result) over stdio")

  // -------------------------------------------------------------------------------------------
  // The libraries, as a consumer's TypeScript program
  // -------------------------------------------------------------------------------------------
  const example = join(app, "examples/embedded-gateway.ts")
  mkdirSync(dirname(example), { recursive: true })
  copyFileSync(join(root, "examples/embedded-gateway.ts"), example)
  // A consumer's ordinary strict config: nothing of ours (no custom conditions, no paths).
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        lib: ["ES2022"],
        types: ["node"],
        skipLibCheck: false
      },
      include: ["examples/*.ts"]
    }, null, 2)
  )
  const checking = Date.now()
  runOk("tsc (the example against the installed packages)", process.execPath, [join(app, "node_modules/typescript/bin/tsc"), "-p", app], {
    cwd: app,
    env
  })
  say(`examples/embedded-gateway.ts type-checks against the installed .d.ts (${((Date.now() - checking) / 1000).toFixed(1)}s)`)
  const ran = runOk("the compiled example", process.execPath, [join(app, "examples/embedded-gateway.js")], { cwd: app, env, timeout: 60_000 })
  // The example logs with Effect's default logger (stdout) before it prints its result.
  const result = JSON.parse(ran.stdout.slice(ran.stdout.startsWith("{") ? 0 : ran.stdout.indexOf("\n{") + 1))
  check(result.tools.includes("legacy__hello") && result.tools.includes("modern__hello"), `the example lists both servers: ${ran.stdout}`)
  const greetings = JSON.stringify(result.greetings)
  check(greetings.includes("over legacy") && greetings.includes("over modern"), `the example greets both servers: ${greetings}`)
  say("examples/embedded-gateway.ts runs on the installed packages")

  say(`passed in ${((Date.now() - started) / 1000).toFixed(1)}s`)
} catch (e) {
  if (process.exitCode !== 1) {
    say(`FAILED: ${e instanceof Error ? e.stack : String(e)}`)
    process.exitCode = 1
  }
} finally {
  if (process.env.MCPX_INSTALL_TEST_KEEP === "1") say(`kept ${work}`)
  else rmSync(work, { recursive: true, force: true })
}

/**
 * Runs `npx mcpx-fx serve` in `cwd` for one exchange: initialize (2025-11-25), tools/list, a call
 * to each server, a call as a task and its tasks/result, then end of input. Resolves with every frame it wrote once it exited 0.
 */
function serveExchange(cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn("npx", ["--yes=false", "mcpx-fx", "serve", "--config", "mcp.json"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let asked = false
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.stdout.setEncoding("utf8").on("data", (d) => {
      stdout += d
      const frames = stdout.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))
      // The task made in request 5 is read back in 6: the store (better-sqlite3) works installed.
      const task = frames.find((f) => f.id === 5)?.result?.task?.taskId
      if (task !== undefined && !asked) {
        asked = true
        send({ jsonrpc: "2.0", id: 6, method: "tasks/result", params: { taskId: task } })
      }
      // End input once every request is answered; serve then exits by itself.
      const answered = new Set(frames.map((f) => f.id))
      if ([1, 2, 3, 4, 5, 6].every((id) => answered.has(id))) child.stdin.end()
    })
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      if (code !== 0) return reject(new Error(`serve exited ${code ?? signal}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`))
      resolve(stdout.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l)))
    })
    const send = (frame) => child.stdin.write(`${JSON.stringify(frame)}\n`)
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "install-test", version: "1" } }
    })
    send({ jsonrpc: "2.0", method: "notifications/initialized" })
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" })
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "legacy__hello", arguments: {} } })
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "modern__hello", arguments: {} } })
    send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "legacy__hello", arguments: {}, task: {} } })
  })
}
