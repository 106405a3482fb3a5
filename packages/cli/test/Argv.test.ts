import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Argv from "../src/Argv.js"
import { tree } from "../src/Cli.js"
import * as Colour from "../src/Colour.js"

const plan = (...args: ReadonlyArray<string>) => Argv.plan(args, tree)

const run = (...args: ReadonlyArray<string>) => {
  const p = plan(...args)
  if (Either.isLeft(p) || p.right._tag !== "Run") return assert.fail(`expected a run of ${args.join(" ")}, got ${JSON.stringify(p)}`)
  return p.right
}

const refusal = (...args: ReadonlyArray<string>): string => {
  const p = plan(...args)
  if (Either.isRight(p)) return assert.fail(`expected ${args.join(" ")} to be refused, got ${JSON.stringify(p.right)}`)
  return p.left.message
}

describe("Argv.plan", () => {
  it("takes --log-level out wherever it is, before --", () => {
    for (
      const args of [
        ["--log-level", "debug", "settings", "list"],
        ["settings", "--log-level", "debug", "list"],
        ["settings", "list", "--json", "--log-level", "debug"],
        ["settings", "list", "--log-level=debug", "--json"],
        ["call", "a.b", "{}", "--log-level", "DEBUG"]
      ]
    ) {
      const r = run(...args)
      assert.deepStrictEqual(Option.getOrThrow(r.logLevel), LogLevel.Debug, args.join(" "))
      assert.notInclude(r.args.join(" "), "log-level", args.join(" "))
    }
    assert.deepStrictEqual(Option.getOrThrow(run("tools", "--log-level", "warn").logLevel), LogLevel.Warning)
    assert.isTrue(Option.isNone(run("tools").logLevel))
    // After --, it is an argument like the others.
    assert.deepStrictEqual(run("call", "a.b", "--", "--log-level", "x").args, ["call", "a.b", "--", "--log-level", "x"])
  })

  it("takes --log-format out wherever it is, and refuses a format it does not write", () => {
    for (
      const args of [["--log-format", "json", "tools"], ["tools", "--log-format=json", "--json"], ["serve", "--log-level", "info", "--log-format", "json"]]
    ) {
      const r = run(...args)
      assert.deepStrictEqual(Option.getOrThrow(r.logFormat), "json", args.join(" "))
      assert.notInclude(r.args.join(" "), "log-format", args.join(" "))
    }
    assert.isTrue(Option.isNone(run("tools").logFormat))
    assert.include(refusal("tools", "--log-format", "yaml"), `--log-format: expected text or json, got "yaml"`)
    assert.include(refusal("tools", "--log-format"), `--log-format: expected text or json, got ""`)
    assert.include(refusal("--log-format", "json", "tools", "--log-format", "text"), "--log-format is given more than once")
  })

  it("refuses a bad, missing or repeated --log-level", () => {
    assert.include(refusal("tools", "--log-level", "loud"), `expected one of all, trace, debug, info, warning, error, fatal, none, got "loud"`)
    assert.include(refusal("tools", "--log-level"), "--log-level needs a value")
    assert.include(refusal("--log-level", "info", "tools", "--log-level", "debug"), "--log-level is given more than once")
  })

  it("refuses a mistyped command word with the closest commands", () => {
    assert.strictEqual(refusal("stauts"), `unknown command "stauts"; did you mean status? (mcpx-fx --help lists the commands)`)
    assert.strictEqual(refusal("--pool-max", "3", "sevre"), `unknown command "sevre"; did you mean serve? (mcpx-fx --help lists the commands)`)
    assert.strictEqual(refusal("settings", "--json", "lsit"), `unknown settings command "lsit"; did you mean list?`)
    assert.include(
      refusal("frobnicate"),
      "expected one of: tools, search, call, elicit, tasks, protocol, probe, servers, settings, config, serve, daemon, status, stop, ui, auth"
    )
    assert.strictEqual(refusal("--jsno", "tools"), `unknown option "--jsno"; did you mean --json? (mcpx-fx --help lists the commands and options)`)
  })

  it("refuses an unknown option after the command as an option, with the closest of its options", () => {
    assert.strictEqual(
      refusal("tools", "--jsn"),
      `unknown option "--jsn" for tools; did you mean --json? (mcpx-fx tools --help lists its options; an argument that starts with - goes after --)`
    )
    assert.strictEqual(
      refusal("search", "echo", "--limt", "2"),
      `unknown option "--limt" for search; did you mean --limit? (mcpx-fx search --help lists its options; an argument that starts with - goes after --)`
    )
    assert.include(refusal("tools", "--pool-maxx", "3"), `unknown option "--pool-maxx" for tools; did you mean --pool-max?`)
    assert.include(refusal("settings", "list", "--jsno"), `unknown option "--jsno" for settings list; did you mean --json?`)
    assert.include(refusal("call", "a.b", "{}", "--no-inptu"), `did you mean --no-input?`)
    assert.include(refusal("tools", "-x"), `unknown option "-x" for tools`)
    assert.include(refusal("servers", "add", "fs", "npx", "-y", "pkg"), `unknown option "-y" for servers add`)
    // Known options anywhere after the command, and their values, are left to @effect/cli.
    assert.deepStrictEqual(run("search", "echo", "--limit", "2", "more").args, ["search", "echo", "--limit", "2", "more"])
    assert.deepStrictEqual(run("tools", "--pool-max=3", "--json").args, ["tools", "--pool-max=3", "--json"])
    // After --, "-" (stdin) and negative numbers: arguments.
    assert.deepStrictEqual(run("servers", "add", "x", "npx", "--", "-y", "--jsn").args, ["servers", "add", "x", "npx", "--", "-y", "--jsn"])
    assert.deepStrictEqual(run("call", "a.b", "-").args, ["call", "a.b", "-"])
    assert.deepStrictEqual(run("settings", "set", "pool.max", "-1").args, ["settings", "set", "pool.max", "-1"])
  })

  it("skips an option's value while looking for the command word", () => {
    // "tools" here is the value of --config, not the command.
    assert.deepStrictEqual(run("--config", "tools", "status").args, ["--config", "tools", "status"])
    assert.deepStrictEqual(run("--config=x.json", "settings", "get", "pool.max").args, ["--config=x.json", "settings", "get", "pool.max"])
    // A command's arguments are not command words.
    assert.deepStrictEqual(run("tools", "stauts").args, ["tools", "stauts"])
  })

  it("names the command it found, which is all @effect/cli is then given under the root", () => {
    assert.strictEqual(run("--config", "tools", "status").command, "status")
    assert.strictEqual(run("--config=x.json", "settings", "get", "pool.max").command, "settings")
    assert.strictEqual(run("tools", "stauts").command, "tools")
    assert.strictEqual(run("--wizard").command, undefined)
  })

  it("gives the top-level help for no command, --help or help, and the version for --version", () => {
    for (const args of [[], ["--help"], ["-h"], ["help"], ["--json"], ["--log-level", "debug"]]) {
      assert.deepStrictEqual(plan(...args), Either.right({ _tag: "TopHelp" }), args.join(" "))
    }
    assert.deepStrictEqual(plan("--version"), Either.right({ _tag: "Version" }))
    const helpOf = (...args: ReadonlyArray<string>) => {
      const p = Either.getOrThrow(plan(...args))
      return p._tag === "CommandHelp" ? p.path : p._tag
    }
    assert.deepStrictEqual(helpOf("tools", "--help"), ["tools"])
    assert.deepStrictEqual(helpOf("tools", "github", "-h"), ["tools"])
    assert.deepStrictEqual(helpOf("help", "settings", "set"), ["settings", "set"])
    assert.deepStrictEqual(helpOf("settings", "--help"), ["settings"])
    assert.include(refusal("help", "stauts"), "did you mean status?")
  })

  it("gives mcpx-fx's own completion script for --completions", () => {
    assert.deepStrictEqual(plan("--completions", "bash"), Either.right({ _tag: "Completions", shell: "bash" }))
    assert.deepStrictEqual(plan("--completions=sh"), Either.right({ _tag: "Completions", shell: "bash" }))
    assert.deepStrictEqual(plan("--completions", "fish"), Either.right({ _tag: "Completions", shell: "fish" }))
    assert.include(refusal("--completions", "tcsh"), "expected one of bash, zsh, fish")
  })
})

describe("Argv.plan, on util.parseArgs's words", () => {
  it("reads --opt=value as one word, whatever the value starts with", () => {
    assert.deepStrictEqual(run("tools", "--config=--odd.json").args, ["tools", "--config=--odd.json"])
    assert.deepStrictEqual(run("tools", "--pool-max=-1").args, ["tools", "--pool-max=-1"])
    assert.deepStrictEqual(Option.getOrThrow(run("tools", "--log-format=json", "--log-level=debug").logFormat), "json")
    assert.strictEqual(run("--config=settings", "tools").command, "tools")
  })

  it("refuses a word that looks like an option as the value of the option before it", () => {
    assert.strictEqual(
      refusal("tools", "--config", "--json"),
      `--config needs a value, and "--json" is an option (--config=--json gives that as the value)`
    )
    // The value of --pool-max is --log-level here, so debug is the command's argument.
    assert.include(refusal("tools", "--pool-max", "--log-level", "debug"), `--pool-max needs a value, and "--log-level" is an option`)
    assert.include(refusal("tools", "--config", "--"), `--config needs a value, and "--" is an option`)
    assert.include(refusal("tools", "--log-level", "--json"), `--log-level: expected one of all, trace, debug, info, warning, error, fatal, none, got "--json"`)
  })

  it("ends the options at --: after it nothing is an option, a log flag, help or a command word", () => {
    assert.deepStrictEqual(run("tools", "--", "--jsn", "-x").args, ["tools", "--", "--jsn", "-x"])
    assert.deepStrictEqual(run("call", "a.b", "--", "--help").args, ["call", "a.b", "--", "--help"])
    assert.isTrue(Option.isNone(run("tools", "--", "--log-format", "yaml").logFormat))
    assert.deepStrictEqual(run("servers", "--", "stauts").args, ["servers", "--", "stauts"])
    // Only the first -- ends them; a second one is an argument.
    assert.deepStrictEqual(run("call", "a.b", "--", "x", "--", "y").args, ["call", "a.b", "--", "x", "--", "y"])
  })

  it("takes negative numbers for arguments and values, not for options", () => {
    assert.deepStrictEqual(run("settings", "set", "pool.max", "-12").args, ["settings", "set", "pool.max", "-12"])
    assert.deepStrictEqual(run("settings", "set", "pool.max", "-1.5").args, ["settings", "set", "pool.max", "-1.5"])
    assert.deepStrictEqual(run("tools", "--pool-max", "-1", "--json").args, ["tools", "--pool-max", "-1", "--json"])
  })

  it("leaves a repeated option to @effect/cli, but the log flags, which are read here", () => {
    assert.deepStrictEqual(run("tools", "--json", "--json").args, ["tools", "--json", "--json"])
    assert.deepStrictEqual(run("tools", "--pool-max", "3", "--pool-max=4").args, ["tools", "--pool-max", "3", "--pool-max=4"])
    assert.include(refusal("tools", "--log-level=debug", "--log-level", "info"), "--log-level is given more than once")
    assert.include(refusal("--log-format=json", "tools", "--log-format=text"), "--log-format is given more than once")
  })

  it("reports a group of short options as typed, and help topics without option values", () => {
    assert.include(refusal("tools", "-hx"), `unknown option "-hx" for tools`)
    const p = Either.getOrThrow(plan("help", "--config", "x.json", "settings", "set"))
    assert.deepStrictEqual(p._tag === "CommandHelp" ? p.path : p._tag, ["settings", "set"])
  })
})

describe("Colour.enabled", () => {
  it("colours a terminal only, and never under NO_COLOR or TERM=dumb", () => {
    assert.isTrue(Colour.enabled(true, {}))
    assert.isTrue(Colour.enabled(true, { NO_COLOR: "" }))
    assert.isFalse(Colour.enabled(false, {}))
    assert.isFalse(Colour.enabled(undefined, {}))
    assert.isFalse(Colour.enabled(true, { NO_COLOR: "1" }))
    assert.isFalse(Colour.enabled(true, { TERM: "dumb" }))
  })

  it("strips colour codes but not cursor movement", () => {
    assert.strictEqual(Colour.strip("\x1b[0;1mUSAGE\x1b[0m \x1b[K"), "USAGE \x1b[K")
  })
})
