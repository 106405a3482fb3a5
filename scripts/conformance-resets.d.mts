// Types of conformance-resets.mjs, for the tests that import it.

/** A client's request to the suite's mock server that the server reset. */
export interface MockServerReset {
  readonly url: string
  readonly cause: string
}

export declare const mockServerReset: (stderr: string) => MockServerReset | undefined

export declare const scenarioOfDir: (dir: string) => string

export declare const resetsIn: (legDir: string, scenarios: ReadonlyArray<string>) => Map<string, MockServerReset>

export declare const rerunnable: (leg: {
  readonly unexpected: ReadonlyArray<string>
  readonly stale: boolean
  readonly resets: ReadonlyMap<string, MockServerReset>
}) => Array<string> | undefined
