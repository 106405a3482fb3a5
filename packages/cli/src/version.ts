/** The mcpx-fx version, reported by `--version` and in serverInfo/clientInfo. */
export const version = "0.1.0"
