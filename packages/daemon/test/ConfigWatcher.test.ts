/**
 * The ConfigWatcher on a file system the test drives: a burst of file events is one reload after
 * the debounce (TestClock), a file that does not read keeps the running config and is reported,
 * and a reload that works clears the report.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { Config, type LoadedConfig } from "@mcpx-fx/config/Config"
import { ConfigWatcher } from "../src/ConfigWatcher.js"
import { Gateway } from "@mcpx-fx/gateway/Gateway"
import { Settings } from "@mcpx-fx/config/Settings"

const file = "/work/.mcpx.json"
const good = (command: string) => JSON.stringify({ mcpServers: { a: { command } } })

/** A file system of one file whose watch events the test sends. */
const fakeFs = (content: { text: string }, events: Queue.Queue<FileSystem.WatchEvent>) =>
  FileSystem.layerNoop({
    exists: (p) => Effect.succeed(p === file),
    readFileString: () => Effect.sync(() => content.text),
    watch: () => Stream.fromQueue(events)
  })

/** A gateway that records the configurations it is given. */
const recordingGateway = (given: Array<LoadedConfig>) =>
  Layer.succeed(
    Gateway,
    Gateway.of({
      servers: [],
      listTools: () => Effect.succeed({ items: [], failures: [] }),
      listPrompts: () => Effect.succeed({ items: [], failures: [] }),
      listResources: () => Effect.succeed({ items: [], failures: [] }),
      listResourceTemplates: () => Effect.succeed({ items: [], failures: [] }),
      knownTools: () => Effect.succeed({ items: [], unlisted: [], failures: [] }),
      describeTool: () => Effect.dieMessage("unused"),
      peekTool: () => undefined,
      resolveTool: () => Effect.dieMessage("unused"),
      reconfigure: (config) =>
        Effect.sync(() => {
          given.push(config)
          return { added: config.servers.map((s) => s.name), removed: [], restarted: [], refiltered: [], unchanged: [] }
        }),
      callTool: () => Effect.dieMessage("unused"),
      getPrompt: () => Effect.dieMessage("unused"),
      readResource: () => Effect.dieMessage("unused"),
      forward: () => Effect.dieMessage("unused"),
      protocol: Effect.succeed([]),
      probe: () => Effect.dieMessage("unused"),
      changes: Effect.dieMessage("unused"),
      watchResource: () => Effect.dieMessage("unused")
    })
  )

/** Waits until the watcher's debounce sleep is on the TestClock, so adjusting it means something. */
const debouncing = TestClock.sleeps().pipe(Effect.repeat({ until: (sleeps) => sleeps.length > 0 }))

const initial: LoadedConfig = { files: [file], explicit: false, servers: [], disabled: [], settingsFiles: [] }

describe("ConfigWatcher", () => {
  it.scoped("config/watch/a burst of file events is one reload after the debounce; a broken file is refused and reported", () =>
    Effect.gen(function*() {
      const content = { text: good("one") }
      const events = yield* Queue.unbounded<FileSystem.WatchEvent>()
      const given: Array<LoadedConfig> = []
      const layer = ConfigWatcher.layer({ env: {}, cwd: "/work", home: "/home" }, { watch: true, debounce: "200 millis" }).pipe(
        Layer.provide(Layer.mergeAll(
          Config.layerStatic(initial),
          recordingGateway(given),
          Settings.layerDefaults,
          fakeFs(content, events),
          NodePath.layer
        ))
      )
      // Built in the test's scope, so the watch lives as long as the test.
      const watcher = Context.get(yield* Layer.build(layer), ConfigWatcher)
      const told = yield* watcher.subscribe
      const update = FileSystem.WatchEventUpdate({ path: ".mcpx.json" })
      content.text = good("two")
      yield* Queue.offerAll(events, [update, update, update, FileSystem.WatchEventUpdate({ path: "unrelated.txt" })])
      yield* debouncing
      yield* TestClock.adjust("199 millis")
      assert.strictEqual(given.length, 0)
      yield* TestClock.adjust("1 millis")
      const reloaded = yield* Queue.take(told)
      assert.strictEqual(reloaded.type, "config.reload")
      assert.strictEqual(given.length, 1)
      const defined = given[0]!.servers[0]!.definition
      assert.strictEqual(defined.transport === "stdio" ? defined.command : "", "two")
      assert.strictEqual(Option.getOrThrow(yield* watcher.state).reloads, 1)

      // A broken save: nothing is applied, the error is an event and in the state.
      content.text = `{ "mcpServers": { "a": { "command": `
      yield* Queue.offer(events, update)
      yield* debouncing
      yield* TestClock.adjust("200 millis")
      const refused = yield* Queue.take(told)
      assert.strictEqual(refused.type, "config.error")
      assert.include(refused.type === "config.error" ? refused.message : "", file)
      assert.strictEqual(given.length, 1)
      assert.isTrue(Option.isSome(Option.fromNullable(Option.getOrThrow(yield* watcher.state).error)))

      // Fixed: applied, and the error is gone.
      content.text = good("three")
      const outcome = yield* watcher.reload
      assert.strictEqual(outcome.type, "config.reload")
      assert.isUndefined(Option.getOrThrow(yield* watcher.state).error)
      assert.strictEqual(given.length, 2)
    }))

  it.scoped("config/watch/a storm of reload requests coalesces: one runs, one waits, every caller gets an outcome", () =>
    Effect.gen(function*() {
      const given: Array<LoadedConfig> = []
      const gate = yield* Deferred.make<void>()
      const entered = yield* Deferred.make<void>()
      // The first reconfigure holds until the test opens the gate, as a slow reload would.
      const recording = recordingGateway(given)
      const slow = Layer.map(recording, (ctx) => {
        const inner = Context.get(ctx, Gateway)
        return Context.make(Gateway, {
          ...inner,
          reconfigure: (config) =>
            Effect.zipRight(
              given.length === 0 ? Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(gate)) : Effect.void,
              inner.reconfigure(config)
            )
        })
      })
      const events = yield* Queue.unbounded<FileSystem.WatchEvent>()
      const layer = ConfigWatcher.layer({ env: {}, cwd: "/work", home: "/home" }, { watch: false }).pipe(
        Layer.provide(Layer.mergeAll(
          Config.layerStatic(initial),
          slow,
          Settings.layerDefaults,
          fakeFs({ text: good("one") }, events),
          NodePath.layer
        ))
      )
      const watcher = Context.get(yield* Layer.build(layer), ConfigWatcher)
      const first = yield* Effect.fork(watcher.reload)
      yield* Deferred.await(entered)
      const storm = yield* Effect.fork(Effect.all(Array.from({ length: 200 }, () => watcher.reload), { concurrency: "unbounded" }))
      yield* Deferred.succeed(gate, undefined)
      const outcomes = yield* Fiber.join(storm)
      assert.strictEqual((yield* Fiber.join(first)).type, "config.reload")
      assert.strictEqual(outcomes.length, 200)
      assert.isTrue(outcomes.every((o) => o.type === "config.reload"))
      assert.strictEqual(given.length, 2)
      assert.strictEqual(Option.getOrThrow(yield* watcher.state).reloads, 2)
    }))

  it.scoped("config/none: a process that watches nothing has no state, tells no events and refuses a reload", () =>
    Effect.gen(function*() {
      const watcher = yield* ConfigWatcher
      assert.isTrue(Option.isNone(yield* watcher.state))
      const told = yield* watcher.subscribe
      const outcome = yield* watcher.reload
      assert.strictEqual(outcome.type, "config.error")
      assert.isTrue(yield* Queue.isEmpty(told))
    }).pipe(Effect.provide(ConfigWatcher.none)))
})
