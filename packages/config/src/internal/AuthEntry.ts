/**
 * A server's `auth` block in the config file:
 *
 * ```jsonc
 * "auth": { "type": "oauth", "clientId": "${DOCS_CLIENT_ID}", "clientSecret": "${DOCS_CLIENT_SECRET}",
 *           "scopes": ["read", "write"], "redirectPort": 8976,
 *           "clientMetadataUrl": "https://example.com/mcpx-fx/client.json" }
 * ```
 *
 * Every key but `type` is optional, and an HTTP server without the block is authorized the same
 * way when it asks (a 401), unless its `headers` carry an `Authorization` of their own. `${VAR}`
 * expands in `clientId`, `clientSecret` and `scopes`; what they expand to is never shown.
 */
import { OAuthSettings } from "@mcpx-fx/upstream/ServerDefinition"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Codec from "./Codec.js"

const { exact, expecting, Text } = Codec

// A Client ID Metadata Document's URL is the client id itself: https, with a path.
const DocumentUrl = expecting(
  Schema.String.pipe(Schema.filter((s) => URL.canParse(s) && new URL(s).protocol === "https:" && new URL(s).pathname !== "/")),
  "an https:// URL with a path"
)

const Port = expecting(
  Schema.Number.pipe(Schema.int(), Schema.between(1, 65535)),
  "a port number from 1 to 65535"
)

/** The block as written, before `${VAR}` expansion. */
export const AuthBlock = expecting(
  Schema.Struct({
    type: expecting(Schema.Literal("oauth"), `"oauth"`),
    clientId: exact(Text),
    clientSecret: exact(Text),
    scopes: exact(expecting(Schema.Array(Text), "a list of strings")),
    redirectPort: exact(Port),
    clientMetadataUrl: exact(DocumentUrl)
  }).annotations({ parseOptions: { onExcessProperty: "error" } }),
  `an object with type "oauth" and optionally clientId, clientSecret, scopes, redirectPort or clientMetadataUrl`
)
/** The block as written. */
export type AuthBlock = typeof AuthBlock.Type

/** Expands one value at a key path of the block (the config's own expansion, with its messages). */
export type ExpandAt<E> = (keys: ReadonlyArray<PropertyKey>, value: string) => Either.Either<string, E>

/** The block with its variables expanded, as the upstream package takes it. */
export const buildAuth = <E>(block: AuthBlock, expandAt: ExpandAt<E>): Either.Either<OAuthSettings, E> =>
  Either.gen(function*() {
    const clientId = block.clientId === undefined ? undefined : yield* expandAt(["clientId"], block.clientId)
    const clientSecret = block.clientSecret === undefined ? undefined : yield* expandAt(["clientSecret"], block.clientSecret)
    const scopes: Array<string> = []
    for (const [i, scope] of (block.scopes ?? []).entries()) scopes.push(yield* expandAt(["scopes", i], scope))
    return new OAuthSettings({
      type: "oauth",
      ...(clientId === undefined || clientId === "" ? {} : { clientId }),
      ...(clientSecret === undefined || clientSecret === "" ? {} : { clientSecret }),
      ...(block.scopes === undefined ? {} : { scopes }),
      ...(block.redirectPort === undefined ? {} : { redirectPort: block.redirectPort }),
      ...(block.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: block.clientMetadataUrl })
    })
  })

/** Whether a server's headers already authorize it, which an `auth` block would contradict. */
export const hasAuthorizationHeader = (headers: Readonly<Record<string, string>> | undefined): boolean =>
  Object.keys(headers ?? {}).some((k) => k.toLowerCase() === "authorization")
