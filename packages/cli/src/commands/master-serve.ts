import { defineCommand } from "citty";
import { runCommand, untilSignal } from "./_shared.js";

/** `platform master serve`: start the master and keep it running until Ctrl-C or SIGTERM. */
export default defineCommand({
  meta: {
    name: "serve",
    description:
      "Start the master. Needs ADMIN_TOKEN (or ADMIN_TOKEN_FILE). Without --database-url it keeps its data in an embedded database under --data-dir.",
  },
  args: {
    host: {
      type: "string",
      description: "Address to listen on",
      default: "127.0.0.1",
      valueHint: "addr",
    },
    port: { type: "string", description: "Port to listen on", default: "8080", valueHint: "port" },
    "database-url": {
      type: "string",
      description: "PostgreSQL URL (default: DATABASE_URL, else the embedded database)",
      valueHint: "url",
    },
    "data-dir": {
      type: "string",
      description: "Where the embedded database and the master key live",
      default: ".platform",
      valueHint: "dir",
    },
  },
  run: ({ args }) =>
    runCommand(async () => {
      const { createMaster, loadMasterConfig } = await import("@platform/master");
      const { redactDatabaseUrl } = await import("@platform/core");
      const flags: Parameters<typeof loadMasterConfig>[0] = {
        host: args.host,
        port: args.port,
        dataDir: args["data-dir"],
      };
      if (args["database-url"]) flags.databaseUrl = args["database-url"];
      const config = loadMasterConfig(flags);
      const master = await createMaster(config);
      const server = await master.listen();
      const where =
        master.database.backend === "pglite"
          ? `embedded database in ${config.dataDir}`
          : redactDatabaseUrl(master.database.url);
      process.stdout.write(`platform master listening on ${server.url} (${where})\n`);
      const signal = await untilSignal();
      process.stdout.write(`received ${signal}, shutting down\n`);
      await master.close();
    }),
});
