import { defineCommand } from "citty";

/** `platform master`: run the subnet's control plane. */
export default defineCommand({
  meta: {
    name: "master",
    description: "Run the subnet master (registry, admin API, proxy, broker, weights)",
  },
  subCommands: {
    serve: () => import("./master-serve.js").then((module) => module.default),
  },
});
