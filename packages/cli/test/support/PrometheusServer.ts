/**
 * A real Prometheus (Debian's package) for end-to-end tests: installed with apt-get when missing,
 * started on an ephemeral loopback port with a throwaway TSDB and one scrape job, ready once its
 * `/-/ready` answers, stopped when the scope closes.
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as DebianPackage from "./DebianPackage.js"

export const Binary = "/usr/bin/prometheus"

/** Prometheus could not be installed or started. */
export class PrometheusError extends Data.TaggedError("PrometheusError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

/** Installs Debian's `prometheus` package unless its binary is there. */
export const ensureInstalled: Effect.Effect<void, PrometheusError> = Effect.mapError(
  DebianPackage.ensure(Binary, "prometheus"),
  (e) => new PrometheusError({ detail: e.detail })
)

const freePort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A running Prometheus. */
export interface Prometheus {
  readonly url: string
  /** The value of an instant query's first series, or undefined while it has none. */
  readonly query: (promql: string) => Effect.Effect<string | undefined>
  readonly log: () => string
}

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

interface QueryReply {
  readonly status: string
  readonly data?: { readonly result?: ReadonlyArray<{ readonly value?: readonly [number, string] }> }
}

/** Starts Prometheus scraping `target` (host:port) at `metricsPath` every second. */
export const start = (
  target: string,
  options: { readonly metricsPath?: string; readonly bearerToken?: string } = {}
): Effect.Effect<Prometheus, PrometheusError, Scope.Scope> =>
  Effect.gen(function*() {
    yield* ensureInstalled
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "mcpx-prometheus-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const config = join(dir, "prometheus.yml")
    writeFileSync(
      config,
      [
        "global:",
        "  scrape_interval: 1s",
        "  scrape_timeout: 1s",
        "scrape_configs:",
        "  - job_name: mcpx-fx",
        `    metrics_path: ${options.metricsPath ?? "/metrics"}`,
        ...(options.bearerToken === undefined ? [] : ["    authorization:", `      credentials: ${options.bearerToken}`]),
        "    static_configs:",
        `      - targets: ["${target}"]`,
        ""
      ].join("\n")
    )
    const port = yield* freePort
    let log = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(Binary, [
          `--config.file=${config}`,
          `--web.listen-address=127.0.0.1:${port}`,
          `--storage.tsdb.path=${join(dir, "data")}`,
          "--log.level=warn"
        ], { stdio: ["ignore", "ignore", "pipe"] })
      ),
      (child) =>
        Effect.zipRight(
          Effect.sync(() => {
            child.kill("SIGTERM")
            // A Node timer: finalizers are uninterruptible, and Prometheus must not outlive the run.
            setTimeout(() => child.kill("SIGKILL"), 10_000).unref()
          }),
          exited(child)
        )
    )
    child.stderr?.on("data", (d: Buffer) => (log += d.toString()))
    const url = `http://127.0.0.1:${port}`
    // Readiness is only told by asking: a bounded poll of `/-/ready`.
    yield* Effect.tryPromise(() => fetch(`${url}/-/ready`).then((r) => (r.ok ? undefined : Promise.reject(new Error(String(r.status)))))).pipe(
      Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(20)))),
      Effect.mapError(() => new PrometheusError({ detail: `Prometheus did not become ready on ${url}: ${log}` }))
    )
    return {
      url,
      log: () => log,
      query: (promql) =>
        Effect.promise(() => fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`).then((r) => r.json() as Promise<QueryReply>)).pipe(
          Effect.map((reply) => reply.data?.result?.[0]?.value?.[1])
        )
    } satisfies Prometheus
  })
