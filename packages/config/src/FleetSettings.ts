/**
 * The fleet's settings: several mcpx-fx daemons behind one load balancer, serving as one gateway.
 * All are off by default; one daemon with none of them set behaves exactly as a lone daemon.
 */
import * as Codec from "./internal/Codec.js"
import { define } from "./internal/SettingDefine.js"

/** What `fleet.instance` and `fleet.name` must look like: they prefix session ids and name NATS subjects. */
export const FleetNamePattern = /^[a-z0-9-]{1,32}$/

export const fleetSettings = [
  define("fleet.nats", {
    codec: Codec.natsUrl,
    default: "",
    hot: false,
    description: "The NATS server through which the instances of one fleet reach the one holding a live upstream call (a retry " +
      "of a pending question, tasks/update, tasks/cancel). Empty: no fleet. Needs fleet.secret, and tasks.store on " +
      "PostgreSQL."
  }),
  define("fleet.secret", {
    codec: Codec.sharedSecret,
    default: "",
    hot: false,
    secret: true,
    description: "The secret every instance of a fleet shares (32 characters or more): requestState is signed with a key derived " +
      "from it, so a state one instance handed out opens on any other. Without it each process signs with a key of its own."
  }),
  define("fleet.name", {
    codec: Codec.matching("1 to 32 of a-z, 0-9 and -", FleetNamePattern),
    default: "mcpx",
    hot: false,
    description: "The fleet's name, the prefix of its NATS subjects, so two fleets on one NATS server never mix."
  }),
  define("fleet.instance", {
    codec: Codec.matching("1 to 32 of a-z, 0-9 and -, or empty for <hostname>-<pid>", FleetNamePattern),
    default: "",
    hot: false,
    description: "This daemon's name in the fleet (empty: <hostname>-<pid>). With fleet.nats set, the legacy Mcp-Session-Ids it " +
      "mints begin with \"<name>.\", so the load balancer can send a legacy session's requests back to it."
  })
] as const
