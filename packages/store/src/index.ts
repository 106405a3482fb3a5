/**
 * @mcpx-fx/store: the `TaskStore` port of `@mcpx-fx/server` kept in SQL — embedded SQLite (the
 * default, in the state dir) or PostgreSQL (shared by a fleet).
 */
/** The task store over `@effect/sql`: `layerSqlite`, `layerPostgres`, and `make` over a SqlClient of your own. */
export * as SqlTaskStore from "./SqlTaskStore.js"
