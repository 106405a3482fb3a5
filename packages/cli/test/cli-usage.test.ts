/**
 * The command line's front door, end to end through the bundle: mistyped commands, `--log-level`
 * after the command, the short top-level help, colour only on a terminal, shell completion.
 */
import { assert, describe, it } from "@effect/vitest"
import * as SettingsRegistry from "@mcpx-fx/config/SettingsRegistry"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { lines, sandbox } from "./support/Sandbox.js"

const Esc = "\x1b["

// A terminal, as far as mcpx-fx can tell: isTTY set before the bundle loads.
const fakeTty = (stream: "stdout" | "stderr") => ({ NODE_OPTIONS: `--import=data:text/javascript,process.${stream}.isTTY=true` })

const commands = [
  "tools",
  "search",
  "call",
  "elicit",
  "tasks",
  "protocol",
  "probe",
  "servers",
  "settings",
  "config",
  "serve",
  "daemon",
  "status",
  "stop",
  "ui",
  "auth"
]

describe("mcpx-fx: a mistyped command", () => {
  it.scopedLive("gets the closest command and exit 2", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["stauts"])
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stdout, "")
      assert.strictEqual(r.stderr, `mcpx-fx: unknown command "stauts"; did you mean status? (mcpx-fx --help lists the commands)\n`)
      const sub = yield* sb.run(["settings", "lsit"])
      assert.strictEqual(sub.code, 2)
      assert.strictEqual(sub.stderr, `mcpx-fx: unknown settings command "lsit"; did you mean list?\n`)
    }))
})

describe("mcpx-fx: an unknown option after the command", () => {
  it.scopedLive("is named as an option with the closest one, exit 2", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      for (
        const [args, expected] of [
          [["tools", "--jsn"], `unknown option "--jsn" for tools; did you mean --json?`],
          [["search", "echo", "--limt", "2"], `unknown option "--limt" for search; did you mean --limit?`],
          [["tools", "--pool-maxx", "3"], `unknown option "--pool-maxx" for tools; did you mean --pool-max?`]
        ] as const
      ) {
        const r = yield* sb.run(args)
        assert.strictEqual(r.code, 2, args.join(" "))
        assert.strictEqual(r.stdout, "", args.join(" "))
        assert.include(r.stderr, `mcpx-fx: ${expected}`, args.join(" "))
      }
    }))
})

describe("mcpx-fx: --log-level", () => {
  it.scopedLive("is taken before, between and after the command words", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const quiet = yield* sb.run(["settings", "get", "pool.max"])
      assert.strictEqual(quiet.code, 0, quiet.stderr)
      assert.strictEqual(quiet.stderr, "")
      for (
        const args of [
          ["--log-level", "debug", "settings", "get", "pool.max"],
          ["settings", "--log-level", "debug", "get", "pool.max"],
          ["settings", "get", "pool.max", "--json", "--log-level", "debug"],
          ["settings", "get", "--log-level=debug", "pool.max"]
        ]
      ) {
        const r = yield* sb.run(args)
        assert.strictEqual(r.code, 0, `${args.join(" ")}: ${r.stderr}`)
        assert.include(r.stderr, "DEBUG", args.join(" "))
        assert.include(r.stderr, "settings resolved", args.join(" "))
      }
      const bad = yield* sb.run(["tools", "--log-level", "loud"])
      assert.strictEqual(bad.code, 2)
      assert.include(bad.stderr, `mcpx-fx: --log-level: expected one of all, trace, debug, info, warning, error, fatal, none, got "loud"`)
    }))
})

describe("mcpx-fx: the top-level help", () => {
  it.scopedLive("is short: every command with an example, the common options once, where to read more", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      for (const args of [["--help"], [], ["help"]]) {
        const r = yield* sb.run(args)
        assert.strictEqual(r.code, 0, r.stderr)
        const help = r.stdout
        assert.isAtMost(lines(help).length, 44, help)
        for (const command of commands) assert.match(help, new RegExp(`^  ${command} +\\S`, "m"), command)
        for (const example of ["mcpx-fx tools github --json", "mcpx-fx daemon --daemon-port 0 --json", "mcpx-fx settings get pool.max"]) {
          assert.include(help, example)
        }
        assert.include(help, "--config FILE")
        assert.include(help, "--log-level LEVEL")
        assert.include(help, "mcpx-fx <command> --help")
        // The setting flags are named once as a kind, not listed on every command.
        assert.notInclude(help, "--upstream-probe-timeout")
        assert.notInclude(help, Esc)
      }
    }))

  it.scopedLive("--version prints the version alone", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["--version"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/)
    }))
})

describe("mcpx-fx: colour", () => {
  it.scopedLive("only on a terminal, and never under NO_COLOR or TERM=dumb", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const piped = yield* sb.run(["tools", "--help"])
      assert.strictEqual(piped.code, 0, piped.stderr)
      assert.include(piped.stdout, "USAGE")
      assert.notInclude(piped.stdout, Esc)
      const terminal = yield* sb.run(["tools", "--help"], { env: fakeTty("stdout") })
      assert.include(terminal.stdout, Esc)
      const noColor = yield* sb.run(["tools", "--help"], { env: { ...fakeTty("stdout"), NO_COLOR: "1" } })
      assert.include(noColor.stdout, "USAGE")
      assert.notInclude(noColor.stdout, Esc)
      const dumb = yield* sb.run(["tools", "--help"], { env: { ...fakeTty("stdout"), TERM: "dumb" } })
      assert.notInclude(dumb.stdout, Esc)
      // Logs on stderr follow stderr, whatever stdout is.
      const logs = yield* sb.run(["settings", "list", "--log-level", "debug"], { env: fakeTty("stdout") })
      assert.include(logs.stderr, "DEBUG")
      assert.notInclude(logs.stderr, Esc)
      const colouredLogs = yield* sb.run(["settings", "list", "--log-level", "debug"], { env: fakeTty("stderr") })
      assert.include(colouredLogs.stderr, Esc)
    }))
})

/** What bash's completion offers for `line` (a trailing space: a new, empty word). */
const complete = (script: string, line: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.async((resume) => {
    const program = [
      script,
      `read -ra COMP_WORDS <<< ${JSON.stringify(line)}`,
      `[[ ${JSON.stringify(line)} == *" " ]] && COMP_WORDS+=("")`,
      "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))",
      "_mcpx_fx",
      `printf '%s\\n' "\${COMPREPLY[@]}"`
    ].join("\n")
    execFile("bash", ["--norc", "--noprofile", "-c", program], { encoding: "utf8" }, (error, stdout, stderr) =>
      resume(
        error === null
          ? Effect.succeed(stdout.split("\n").filter((w) => w !== "").sort())
          : Effect.dieMessage(`bash failed: ${stderr}`)
      ))
  })

describe("mcpx-fx --completions", () => {
  it.scopedLive("bash offers the subcommands of the command typed so far, its options, and known values", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const r = yield* sb.run(["--completions", "bash"])
      assert.strictEqual(r.code, 0, r.stderr)
      const script = r.stdout
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx settings s"), ["set"])
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx settings "), ["get", "list", "set", "unset"])
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx s"), ["search", "serve", "servers", "settings", "status", "stop"])
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx "), [...commands].sort())
      // An option's value is not a command word.
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx --config settings st"), ["status", "stop"])
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx --pool-max 3 settings g"), ["get"])
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx settings get pool.m"), ["pool.max"])
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx tools --lo"), ["--local", "--log-format", "--log-level"])
      assert.deepStrictEqual(yield* complete(script, "mcpx-fx serve --log-level w"), ["warning"])
      assert.includeMembers([...(yield* complete(script, "mcpx-fx settings list --"))], SettingsRegistry.registry.map((s) => s.flag))
    }))

  it.scopedLive("zsh loads the same through bashcompinit; fish walks the typed words the same way", () =>
    Effect.gen(function*() {
      const sb = yield* sandbox
      const zsh = yield* sb.run(["--completions", "zsh"])
      assert.strictEqual(zsh.code, 0, zsh.stderr)
      assert.include(zsh.stdout, "bashcompinit")
      assert.include(zsh.stdout, "complete -o default -F _mcpx_fx mcpx-fx")
      const fish = yield* sb.run(["--completions", "fish"])
      assert.strictEqual(fish.code, 0, fish.stderr)
      assert.include(fish.stdout, `complete -c mcpx-fx -n 'test (__mcpx_fx_path) = \\'settings\\'' -a 'set'`)
      assert.include(fish.stdout, `complete -c mcpx-fx -n 'test (__mcpx_fx_path) = \\'\\'' -a 'settings'`)
    }))
})
