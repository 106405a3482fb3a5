// `npm run fleet -- --instances N [--port P] [--config FILE]` (issue 28): N mcpx-fx daemons on one
// PostgreSQL task store and one NATS, behind a stock nginx on loopback (round-robin, no affinity),
// for trying the multi-instance mode out and for the fleet end-to-end test. Prints one JSON line on
// stdout once everything answers:
//
//   {"url": "<nginx's /mcp URL>", "instances": [{"pid", "port", "name"}, ...], "nginx": {"pid", "port"}, ...}
//
// and stops everything it started (nginx, the daemons, the database it made, its temp dir) on SIGTERM
// or Ctrl-C. Everything else goes to stderr. docs/deploy.md explains the generated nginx.conf.
//
//   --instances N   how many daemons (default 3)
//   --port P        nginx's port on 127.0.0.1 (default: a free one)
//   --config FILE   the daemons' config (default: examples/mcpx.json)
//   --store URL     a PostgreSQL database to share (default: one made for the run and dropped after it,
//                   beside --postgres, which defaults to postgres://postgres@127.0.0.1:5432/test)
//   --nats URL      the NATS server (default nats://127.0.0.1:4222)
//   --name NAME     the fleet's name, the NATS subject prefix (default: unique per run)
//   --nginx PATH    the nginx binary (default: nginx on PATH, then /usr/sbin/nginx)
//   --keep          leave the temp dir (daemon logs, nginx.conf, nginx logs) in place at the end
//
// The shared secret comes from MCPX_FLEET_SECRET when set (so a daemon started by hand can join), else
// it is random for the run. MCPX_* variables of the caller reach every daemon, below the fleet's own.
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { accessSync, constants, createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { delimiter, join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { nginxConfig } from "./fleet-nginx.mjs"

const root = new URL("..", import.meta.url).pathname
const bundle = join(root, "packages/cli/dist/mcpx-fx.js")

const fail = (message) => {
  process.stderr.write(`fleet: ${message}\n`)
  process.exit(1)
}

let options
try {
  options = parseArgs({
    options: {
      instances: { type: "string", default: "3" },
      port: { type: "string", default: "0" },
      config: { type: "string", default: join(root, "examples/mcpx.json") },
      store: { type: "string" },
      postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/test" },
      nats: { type: "string", default: "nats://127.0.0.1:4222" },
      name: { type: "string" },
      nginx: { type: "string" },
      keep: { type: "boolean", default: false }
    },
    strict: true
  }).values
} catch (e) {
  fail(`${e.message}\nusage: npm run fleet -- --instances N [--port P] [--config FILE] [--store URL] [--nats URL] [--name NAME] [--keep]`)
}

const instances = Number(options.instances)
if (!Number.isInteger(instances) || instances < 1 || instances > 32) fail(`--instances must be an integer from 1 to 32, not ${options.instances}`)
const requestedPort = Number(options.port)
if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) fail(`--port must be a port number, not ${options.port}`)
const config = resolve(options.config)
if (!existsSync(config)) fail(`no config file at ${config}`)
if (!existsSync(bundle)) fail(`${bundle} is missing: run \`npm run build\` (or \`node scripts/bundle.mjs\`) first`)
const fleetName = options.name ?? `fleet-${randomBytes(4).toString("hex")}`
if (!/^[a-z0-9-]{1,32}$/.test(fleetName)) fail(`--name must match [a-z0-9-]{1,32}, not ${fleetName}`)
const secret = process.env.MCPX_FLEET_SECRET ?? randomBytes(32).toString("base64url")
if (secret.length < 32) fail("MCPX_FLEET_SECRET must be at least 32 characters")

/** nginx from --nginx, PATH or /usr/sbin (Debian puts it there, outside a normal user's PATH). */
const findNginx = () => {
  const candidates = options.nginx !== undefined
    ? [options.nginx]
    : [...(process.env.PATH ?? "").split(delimiter).filter((d) => d !== "").map((d) => join(d, "nginx")), "/usr/sbin/nginx"]
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not this one
    }
  }
  return fail(
    "nginx is not installed (looked on PATH and at /usr/sbin/nginx). On Debian or Ubuntu: `sudo apt-get install nginx-light` " +
      "(or `nginx`); elsewhere install nginx from your package manager, or pass --nginx PATH"
  )
}
const nginxBinary = findNginx()

const freePort = () =>
  new Promise((resolvePort, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolvePort(port))
    })
  })

/** Whether 127.0.0.1:port is free now (a port another program holds must fail before anything starts). */
const portFree = (port) =>
  new Promise((done) => {
    const server = Net.createServer()
    server.once("error", () => done(false))
    server.listen(port, "127.0.0.1", () => server.close(() => done(true)))
  })

/**
 * Resolves once nginx answers on 127.0.0.1:port (its Server header on a reply from the fleet),
 * or rejects when `gone()` says it died. A connection alone would not do: another program may
 * hold the port.
 */
const answering = async (port, gone, ms = 20_000) => {
  const deadline = Date.now() + ms
  for (;;) {
    const server = await fetch(`http://127.0.0.1:${port}/v1/openapi.json`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => (r.body?.cancel(), r.headers.get("server")),
      () => undefined
    )
    if (server?.startsWith("nginx") === true) return
    const why = gone()
    if (why !== undefined) throw new Error(`nginx exited (${why}) before it answered on 127.0.0.1:${port}`)
    if (Date.now() > deadline) throw new Error(`nginx did not answer on 127.0.0.1:${port} within ${ms / 1000}s`)
    // nginx says nothing when it is ready, so readiness is only told by asking.
    await new Promise((r) => setTimeout(r, 50))
  }
}

// Everything started is recorded here first, so a failure or a signal at any point stops it.
const dir = mkdtempSync(join(tmpdir(), "mcpx-fleet-"))
const children = []
let createdDatabase
let stopping

/** Ends a child (SIGTERM, SIGKILL after `graceMs`); resolves once it has exited. */
const end = (child, graceMs) =>
  new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done()
    child.once("exit", () => done())
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), graceMs).unref()
  })

const adminQuery = async (url, sql) => {
  const { default: pg } = await import("pg")
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

const stop = (code) => {
  stopping ??= (async () => {
    // nginx first, so no new request reaches a daemon that is going away.
    const nginx = children.find((c) => c.role === "nginx")
    if (nginx !== undefined) await end(nginx.child, 5_000)
    await Promise.all(children.filter((c) => c.role === "daemon").map((c) => end(c.child, 15_000)))
    if (createdDatabase !== undefined) {
      await adminQuery(options.postgres, `DROP DATABASE IF EXISTS ${createdDatabase} WITH (FORCE)`).catch((e) =>
        process.stderr.write(`fleet: could not drop database ${createdDatabase}: ${e.message}\n`)
      )
    }
    if (options.keep) process.stderr.write(`fleet: kept ${dir}\n`)
    else rmSync(dir, { recursive: true, force: true })
    process.exit(code)
  })()
  return stopping
}
process.once("SIGTERM", () => void stop(0))
process.once("SIGINT", () => void stop(0))
process.once("SIGHUP", () => void stop(0))

const die = (message) => {
  process.stderr.write(`fleet: ${message}\n`)
  return stop(1)
}

/** A URL fit to print: a password in it stays out of logs. */
const withoutPassword = (url) => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return "(unparsable URL)"
  }
}

/** The database every daemon's task store shares: --store, or a fresh one beside --postgres. */
const storeUrl = async () => {
  if (options.store !== undefined) return options.store
  const name = `mcpx_fleet_${randomBytes(6).toString("hex")}`
  try {
    await adminQuery(options.postgres, `CREATE DATABASE ${name}`)
  } catch (e) {
    throw new Error(
      `PostgreSQL is needed for the shared task store and ${withoutPassword(options.postgres)} could not create a database (${e.message}); ` +
        "start PostgreSQL, or pass --store postgres://… (an existing database) or --postgres postgres://… (where to create one)"
    )
  }
  createdDatabase = name
  const url = new URL(options.postgres)
  url.pathname = `/${name}`
  return url.toString()
}

/** Whether the bundle knows the fleet.* settings; without them it runs N independent daemons. */
const knowsFleet = () => {
  const listed = spawnSync(process.execPath, [bundle, "settings", "list", "--json"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, MCPX_STATE_DIR: join(dir, "probe") },
    encoding: "utf8"
  })
  try {
    return JSON.parse(listed.stdout).some((s) => s.path === "fleet.nats")
  } catch {
    return false
  }
}

/** Starts daemon `name`; resolves with its pid and port once it has printed where it listens. */
const startDaemon = (name, env) =>
  new Promise((resolveDaemon, reject) => {
    const home = join(dir, name)
    mkdirSync(home, { recursive: true })
    const log = createWriteStream(join(home, "daemon.log"))
    const child = spawn(process.execPath, [bundle, "daemon", "--json", "--config", config, "--daemon-port", "0"], {
      cwd: root,
      env: { ...env, MCPX_STATE_DIR: join(home, "state"), MCPX_FLEET_INSTANCE: name },
      stdio: ["ignore", "pipe", "pipe"],
      // A process group of its own: Ctrl-C reaches this script alone, which stops nginx first.
      detached: true
    })
    children.push({ role: "daemon", name, child })
    child.stderr.pipe(log)
    // The log goes with the temp dir: a daemon that fails to start says why here.
    let tail = ""
    child.stderr.on("data", (d) => (tail = (tail + d).slice(-2000)))
    let out = ""
    child.stdout.on("data", (chunk) => {
      out += chunk
      const nl = out.indexOf("\n")
      if (nl < 0) return
      try {
        const info = JSON.parse(out.slice(0, nl))
        resolveDaemon({ name, pid: child.pid, port: Number(new URL(info.url).port), mcp: info.mcp })
      } catch {
        reject(new Error(`daemon ${name} printed ${out.slice(0, nl)}`))
      }
    })
    child.once("exit", (code, signal) => {
      reject(new Error(`daemon ${name} exited (${signal ?? code}) before it listened:\n${tail.trim()}`))
      if (stopping === undefined) process.stderr.write(`fleet: daemon ${name} (pid ${child.pid}) exited (${signal ?? code})\n`)
    })
  })

const main = async () => {
  if (!knowsFleet()) {
    process.stderr.write(
      "fleet: this build has no fleet.* settings yet: the daemons share the task store but not requestState, questions or legacy sessions\n"
    )
  }
  const port = requestedPort === 0 ? await freePort() : requestedPort
  if (requestedPort !== 0 && !(await portFree(port))) throw new Error(`127.0.0.1:${port} is taken; pass another --port, or none for a free one`)
  const store = await storeUrl()
  const front = [`127.0.0.1:${port}`, `localhost:${port}`]
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "MCPX_STATE_DIR" && k !== "MCPX_CONFIG"))
  const env = {
    ...inherited,
    MCPX_TASKS_STORE: store,
    MCPX_FLEET_NATS: options.nats,
    MCPX_FLEET_SECRET: secret,
    MCPX_FLEET_NAME: fleetName,
    // The daemons see the Host and Origin the client wrote to nginx (nginx passes $http_host on), so
    // nginx's own address is the one name besides their own that they accept.
    MCPX_TRANSPORT_ALLOWED_HOSTS: front.join(","),
    MCPX_TRANSPORT_ALLOWED_ORIGINS: front.map((h) => `http://${h}`).join(",")
  }
  const names = Array.from({ length: instances }, (_, i) => `i${i + 1}`)
  const daemons = await Promise.all(names.map((name) => startDaemon(name, env)))

  mkdirSync(join(dir, "nginx", "logs"), { recursive: true })
  const nginxDir = join(dir, "nginx")
  writeFileSync(join(nginxDir, "nginx.conf"), nginxConfig({ dir: nginxDir, port, instances: daemons }))
  const nginxLog = createWriteStream(join(nginxDir, "logs", "stderr.log"))
  const nginx = spawn(nginxBinary, ["-p", `${nginxDir}/`, "-c", join(nginxDir, "nginx.conf"), "-e", join(nginxDir, "logs", "error.log"), "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
    detached: true
  })
  children.push({ role: "nginx", child: nginx })
  let nginxStderr = ""
  nginx.stderr.on("data", (d) => (nginxStderr += d))
  nginx.stderr.pipe(nginxLog)
  nginx.once("exit", (code, signal) => {
    if (stopping === undefined) void die(`nginx exited (${signal ?? code}): ${nginxStderr.trim()}`)
  })
  await answering(port, () => (nginx.exitCode ?? nginx.signalCode ?? undefined)).catch((e) => {
    throw new Error(`${e.message}: ${nginxStderr.trim()}`)
  })

  process.stdout.write(
    JSON.stringify({
      url: `http://127.0.0.1:${port}/mcp`,
      instances: daemons.map(({ name, pid, port }) => ({ pid, port, name })),
      nginx: { pid: nginx.pid, port },
      fleet: { name: fleetName, nats: options.nats, store: withoutPassword(store) },
      dir
    }) + "\n"
  )
  process.stderr.write(`fleet: ${instances} daemons behind nginx at http://127.0.0.1:${port}/mcp (Ctrl-C stops them; logs in ${dir})\n`)
}

main().catch((e) => die(e.message))
