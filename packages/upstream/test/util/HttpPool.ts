/** A Pool over real HTTP upstreams (an in-memory era cache, kept visible to the test), for integration tests. */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Layer from "effect/Layer"
import { UpstreamAuth } from "../../src/auth/UpstreamAuth.js"
import { EraCache } from "../../src/era/EraCache.js"
import { Negotiator } from "../../src/era/Negotiator.js"
import { Prober } from "../../src/era/Prober.js"
import { ProcessGroups } from "../../src/os/ProcessGroups.js"
import { Pool } from "../../src/pool/Pool.js"
import * as TransportLayer from "../../src/transport/TransportLayer.js"

export const httpPool = Pool.layer.pipe(
  Layer.provide(Prober.layer),
  Layer.provideMerge(EraCache.layerMemory),
  Layer.provide(Negotiator.layer),
  Layer.provide(TransportLayer.layer()),
  Layer.provide(Layer.mergeAll(FetchHttpClient.layer, UpstreamAuth.none, ProcessGroups.layerNone)),
  Layer.provide(NodeContext.layer)
)
