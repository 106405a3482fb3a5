/** A Pool over real stdio child processes (an in-memory era cache), for integration tests. */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Layer from "effect/Layer"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Pool } from "../../src/pool/Pool.js"
import { Prober } from "../../src/era/Prober.js"
import { stdioTransport } from "./StdioOnly.js"

export const stdioPool: Layer.Layer<Pool> = Pool.layer.pipe(
  Layer.provide(Prober.layer),
  Layer.provide(EraCache.layerMemory),
  Layer.provide(Negotiator.layer),
  Layer.provide(stdioTransport),
  Layer.provide(NodeContext.layer)
)
