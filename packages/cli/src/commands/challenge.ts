import { defineCommand } from "citty";

/** `platform challenge`: the spec's command group. */
export default defineCommand({
  meta: { name: "challenge", description: "Manage and scaffold challenges" },
  subCommands: {
    create: () => import("./challenge-create.js").then((module) => module.default),
    register: () => import("./challenge-register.js").then((module) => module.default),
    activate: () => import("./challenge-lifecycle.js").then((module) => module.activate),
    deactivate: () => import("./challenge-lifecycle.js").then((module) => module.deactivate),
    pull: () => import("./challenge-lifecycle.js").then((module) => module.pull),
    restart: () => import("./challenge-lifecycle.js").then((module) => module.restart),
    update: () => import("./challenge-update.js").then((module) => module.default),
  },
});
