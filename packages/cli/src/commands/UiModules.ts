/** What the daemon's live page (`/ui`) and its owner access use, loaded only when a daemon starts. */
export * as Backend from "@mcpx-fx/server/Backend"
export * as OwnerAccess from "@mcpx-fx/daemon/OwnerAccess"
export * as OwnerSecret from "@mcpx-fx/daemon/OwnerSecret"
export * as RecentCalls from "@mcpx-fx/daemon/RecentCalls"
export * as UiAssets from "@mcpx-fx/daemon/UiAssets"
