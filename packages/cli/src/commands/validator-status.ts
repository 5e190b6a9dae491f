import type { SubmissionRecord } from "@platform/chain";
import { defineCommand } from "citty";
import { jsonFlag, runCommand } from "./_shared.js";
import { openValidatorDatabase, validatorDatabaseFlags, validatorDataDir } from "./_validator.js";
import { readStatusFile } from "./_validator-status-file.js";

/** `platform validator status`: the validator's last submissions, newest first. */
export default defineCommand({
  meta: {
    name: "status",
    description:
      "Print the validator's last submissions from its database: status (pending, in_block, finalized, failed, dropped), the block, the extrinsic and the chain's error. With --master, the master's own validator instead (GET /v1/weights/chain).",
  },
  args: {
    master: {
      type: "string",
      description:
        "Show the master's own validator (its public /v1/weights/chain) instead of a local database",
      valueHint: "url",
    },
    limit: { type: "string", description: "How many (default 10)", default: "10", valueHint: "n" },
    netuid: { type: "string", description: "Only this subnet", valueHint: "n" },
    ...validatorDatabaseFlags,
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      if (args.master) return masterStatus(args.master.replace(/\/+$/, ""), args.json);
      const limit = Math.min(Math.max(Number.parseInt(args.limit, 10) || 10, 1), 1000);
      const parsed = args.netuid === undefined ? undefined : Number.parseInt(args.netuid, 10);
      const netuid = parsed === undefined || Number.isNaN(parsed) ? undefined : parsed;
      const { DataDirLockedError } = await import("@platform/core");
      let database: Awaited<ReturnType<typeof openValidatorDatabase>>;
      try {
        database = await openValidatorDatabase(args);
      } catch (error) {
        // `platform validator run` holds the embedded database: read what it wrote beside it.
        const dataDir = validatorDataDir(args);
        if (!(error instanceof DataDirLockedError) || dataDir === null) throw error;
        return runningStatus(dataDir, { limit, netuid, json: args.json });
      }
      try {
        const { SubmissionStore } = await import("@platform/chain");
        const rows = await new SubmissionStore(database.sql).recent({
          limit,
          ...(netuid === undefined ? {} : { netuid }),
        });
        printSubmissions(rows, args.json);
      } finally {
        await database.close();
      }
    }),
});

/** The running validator's status file, filtered as the database would be. */
async function runningStatus(
  dataDir: string,
  options: { limit: number; netuid: number | undefined; json: boolean },
): Promise<void> {
  const file = await readStatusFile(dataDir);
  const rows = (file?.rows ?? [])
    .filter((row) => options.netuid === undefined || row.netuid === options.netuid)
    .slice(0, options.limit);
  if (!options.json)
    process.stdout.write(
      file
        ? `(the validator is running, process ${file.pid}: its submissions as of ${file.writtenAt.toISOString()})\n`
        : "(the validator is running and has written no status yet)\n",
    );
  printSubmissions(rows, options.json);
}

/** The submissions, newest first: the last confirmed one, then one line each. */
function printSubmissions(rows: SubmissionRecord[], json: boolean): void {
  if (json) {
    process.stdout.write(
      `${JSON.stringify(rows, (_key, value) => (typeof value === "bigint" ? value.toString() : value))}\n`,
    );
    return;
  }
  if (rows.length === 0) {
    process.stdout.write("no submissions yet\n");
    return;
  }
  // A set_weights is confirmed when finalized; a commit when the chain revealed it.
  const confirmed = rows.find((row) => row.status === "finalized" || row.status === "revealed");
  const landed = confirmed?.commit?.revealBlock ?? confirmed?.finalizedBlock;
  process.stdout.write(
    confirmed
      ? `last confirmed: block #${landed?.number} (${confirmed.updatedAt.toISOString()}), netuid ${confirmed.netuid}, uid ${confirmed.uid ?? "-"}, ${confirmed.uids.length} weights\n`
      : "last confirmed: none of these\n",
  );
  for (const row of rows) {
    const where = row.commit?.revealBlock ?? row.finalizedBlock ?? row.inBlock;
    const error = row.errorName
      ? ` ${row.errorName}${row.errorMessage ? `: ${row.errorMessage}` : ""}`
      : "";
    const cause = row.commit?.cause ? ` ${row.commit.cause}` : "";
    process.stdout.write(
      `  #${row.id} ${row.createdAt.toISOString()} netuid ${row.netuid} ${row.kind === "commit" ? "commit" : "set"} ${row.status.padEnd(10)} ${where ? `block #${where.number}` : "-"} ${row.extrinsicHash}${error}${cause}\n`,
    );
  }
}

interface ChainView {
  netuid: number;
  validator: string | null;
  last_confirmed: {
    block: { number: number; hash: string };
    extrinsic_hash: string;
    confirmed_at: string;
    uids: number[];
  } | null;
  last_attempt: { status: string; error: string | null; at: string } | null;
}

/** The master's own validator, from its public chain view. */
async function masterStatus(master: string, json: boolean): Promise<void> {
  const { CliError } = await import("./_shared.js");
  const response = await fetch(`${master}/v1/weights/chain`, {
    signal: AbortSignal.timeout(15_000),
  }).catch((error: Error) => {
    throw new CliError(`cannot reach the master at ${master} (${error.message})`);
  });
  if (response.status === 404)
    throw new CliError("this master sets no weights on chain (PLATFORM_CHAIN_ENDPOINTS is unset)");
  if (!response.ok) throw new CliError(`the master answered HTTP ${response.status}`);
  const view = (await response.json()) as ChainView;
  if (json) {
    process.stdout.write(`${JSON.stringify(view)}\n`);
    return;
  }
  const confirmed = view.last_confirmed;
  process.stdout.write(
    `netuid ${view.netuid}, validator ${view.validator ?? "none (PLATFORM_VALIDATOR_HOTKEY_FILE is unset)"}\n` +
      (confirmed
        ? `last confirmed: block #${confirmed.block.number} (${confirmed.confirmed_at}), ${confirmed.uids.length} weights, extrinsic ${confirmed.extrinsic_hash}\n`
        : "last confirmed: none yet\n") +
      (view.last_attempt
        ? `last attempt: ${view.last_attempt.status}${view.last_attempt.error ? ` (${view.last_attempt.error})` : ""} at ${view.last_attempt.at}\n`
        : ""),
  );
}
