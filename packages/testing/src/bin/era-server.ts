/**
 * era-server: our own "odd" upstream for the gateway's tests. One program whose `--mode` picks an
 * era behaviour that real servers show in the wild (legacy servers that answer a modern probe with
 * -32601/-32602, stay silent, exit or print banners; modern-only; dual; slow discover; the
 * deprecated HTTP+SSE transport). stdio by default, `--http` for Streamable HTTP on 127.0.0.1.
 *
 * Options: --mode <mode>  --http  --port <n>  --versions a,b  --log <file>
 *          --discover-delay <ms>  --reply json|sse|auto  --list-changed
 *          --start-delay <ms>   (stdio: read nothing for that long, as a server npx is fetching)
 *          --late-refusal       (stdio: refuse initialize only after the answers owed before it)
 *          --header-tools [name] (list `weather`, whose region is mirrored in Mcp-Param-<name>;
 *                                 strict over modern HTTP: a missing or wrong header is -32020)
 * Over HTTP, `POST /control` with {"mode": …} or {"headerName": …} changes the running server.
 */
import * as Context from "../era/Context.js"
import * as Http from "../era/Http.js"
import * as Options from "../era/Options.js"
import * as Stdio from "../era/Stdio.js"

const main = (): void => {
  let options: Options.Options
  try {
    options = Options.parse(process.argv.slice(2))
  } catch (e) {
    Context.debug(e instanceof Error ? e.message : String(e))
    process.exit(2)
  }
  const ctx = Context.make(options)
  Context.debug(`mode ${options.mode} over ${options.http ? "http" : "stdio"}`)
  if (options.http) Http.run(ctx)
  else Stdio.run(ctx)
}

main()
