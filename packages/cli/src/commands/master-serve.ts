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
    // No citty defaults: an unset flag leaves its variable (PLATFORM_HOST, ...) to the master's
    // config, which holds the defaults, so the environment is not silently overridden.
    host: {
      type: "string",
      description: "Address to listen on (default: PLATFORM_HOST, else 127.0.0.1)",
      valueHint: "addr",
    },
    port: {
      type: "string",
      description: "Port to listen on (default: PLATFORM_PORT, else 8080)",
      valueHint: "port",
    },
    "admin-host": {
      type: "string",
      description:
        "Address of the admin listener: admin pages, admin API, broker (default: PLATFORM_ADMIN_HOST, else 127.0.0.1)",
      valueHint: "addr",
    },
    "admin-port": {
      type: "string",
      description:
        "Port of the admin listener (default: PLATFORM_ADMIN_PORT, else the port plus one; 0 with --port 0)",
      valueHint: "port",
    },
    "database-url": {
      type: "string",
      description: "PostgreSQL URL (default: DATABASE_URL, else the embedded database)",
      valueHint: "url",
    },
    "data-dir": {
      type: "string",
      description:
        "Where the embedded database and the master key live (default: PLATFORM_DATA_DIR, else .platform)",
      valueHint: "dir",
    },
  },
  run: ({ args }) =>
    runCommand(async () => {
      const { createMaster, loadMasterConfig } = await import("@platform/master");
      const { redactDatabaseUrl } = await import("@platform/core");
      const flags: Parameters<typeof loadMasterConfig>[0] = {};
      if (args.host !== undefined) flags.host = args.host;
      if (args.port !== undefined) flags.port = args.port;
      if (args["admin-host"] !== undefined) flags.adminHost = args["admin-host"];
      if (args["admin-port"] !== undefined) flags.adminPort = args["admin-port"];
      if (args["data-dir"] !== undefined) flags.dataDir = args["data-dir"];
      if (args["database-url"]) flags.databaseUrl = args["database-url"];
      const config = loadMasterConfig(flags);
      const master = await createMaster(config);
      const server = await master.listen();
      const where =
        master.database.backend === "pglite"
          ? `embedded database in ${config.dataDir}`
          : redactDatabaseUrl(master.database.url);
      process.stdout.write(
        `platform master listening on ${server.url} (${where})\n` +
          `admin pages, admin API and broker on ${server.admin.url} (keep it off the public network)\n`,
      );
      const signal = await untilSignal();
      process.stdout.write(`received ${signal}, shutting down\n`);
      await master.close();
    }),
});
