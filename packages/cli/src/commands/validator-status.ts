import { defineCommand } from "citty";
import { jsonFlag, runCommand } from "./_shared.js";
import { openValidatorDatabase, validatorDatabaseFlags } from "./_validator.js";

/** `platform validator status`: the validator's last submissions, newest first. */
export default defineCommand({
  meta: {
    name: "status",
    description:
      "Print the validator's last submissions from its database: status (pending, in_block, finalized, failed, dropped), the block, the extrinsic and the chain's error. For the master's own validator, pass the master's --database-url (or --data-dir <master data dir>/pglite).",
  },
  args: {
    limit: { type: "string", description: "How many (default 10)", default: "10", valueHint: "n" },
    netuid: { type: "string", description: "Only this subnet", valueHint: "n" },
    ...validatorDatabaseFlags,
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      const { SubmissionStore } = await import("@platform/master");
      const database = await openValidatorDatabase(args);
      try {
        const limit = Math.min(Math.max(Number.parseInt(args.limit, 10) || 10, 1), 1000);
        const netuid = args.netuid === undefined ? undefined : Number.parseInt(args.netuid, 10);
        const rows = await new SubmissionStore(database.sql).recent({
          limit,
          ...(netuid === undefined || Number.isNaN(netuid) ? {} : { netuid }),
        });
        if (args.json) {
          process.stdout.write(
            `${JSON.stringify(rows, (_key, value) => (typeof value === "bigint" ? value.toString() : value))}\n`,
          );
          return;
        }
        if (rows.length === 0) {
          process.stdout.write("no submissions yet\n");
          return;
        }
        const confirmed = rows.find((row) => row.status === "finalized");
        process.stdout.write(
          confirmed
            ? `last confirmed: block #${confirmed.finalizedBlock?.number} (${confirmed.updatedAt.toISOString()}), netuid ${confirmed.netuid}, uid ${confirmed.uid ?? "-"}, ${confirmed.uids.length} weights\n`
            : "last confirmed: none of these\n",
        );
        for (const row of rows) {
          const where = row.finalizedBlock ?? row.inBlock;
          const error = row.errorName
            ? ` ${row.errorName}${row.errorMessage ? `: ${row.errorMessage}` : ""}`
            : "";
          process.stdout.write(
            `  #${row.id} ${row.createdAt.toISOString()} netuid ${row.netuid} ${row.status.padEnd(9)} ${where ? `block #${where.number}` : "-"} ${row.extrinsicHash}${error}\n`,
          );
        }
      } finally {
        await database.close();
      }
    }),
});
