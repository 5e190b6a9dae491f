import { setTimeout as sleep } from "node:timers/promises";
import { defineCommand } from "citty";
import { callMaster } from "./_master-client.js";
import { masterUrl } from "./_miner.js";
import { challengeRuntime, subnetStatus } from "./_runtime-status.js";
import { configFlag, jsonFlag, print, runCommand } from "./_shared.js";

const TERMINAL = new Set(["completed", "failed", "rejected", "scored", "error", "cancelled"]);
// Not final, but nothing a poll will see change soon: a held submission waits for an operator
// (or the challenge's own expiry), so --watch stops there instead of polling for a day.
const WAITING = new Set(["held"]);

function describe(record: Record<string, unknown>): string {
  const fields = ["id", "status", "final_score", "score", "error", "created_at"].filter(
    (key) => record[key] !== undefined && record[key] !== null,
  );
  return fields
    .map(
      (key) =>
        `${key}: ${typeof record[key] === "object" ? JSON.stringify(record[key]) : record[key]}`,
    )
    .join("\n");
}

/**
 * `platform status`: the subnet's challenges as the master's reconciler keeps them (admin);
 * `platform status <slug>`: one challenge's runtime and its latest events (admin);
 * `platform status <slug> <submission_id>`: read a submission through the master.
 */
export default defineCommand({
  meta: {
    name: "status",
    description:
      "Show every challenge's runtime (admin), one challenge's (admin), or a submission's status (GET /v1/challenges/{slug}/submissions/{id})",
  },
  args: {
    slug: { type: "positional", description: "The challenge's slug", required: false },
    submission_id: {
      type: "positional",
      description: "The id `platform submit` printed",
      required: false,
    },
    ...configFlag,
    master: {
      type: "string",
      description: "Master URL (default: PLATFORM_MASTER_URL, else http://127.0.0.1:8080)",
      valueHint: "url",
    },
    watch: {
      type: "boolean",
      description: "Poll until the submission reaches a final status (or is held)",
      default: false,
    },
    interval: { type: "string", description: "Seconds between polls with --watch", default: "5" },
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      if (!args.slug || !args.submission_id) {
        const { body, text } = args.slug
          ? await challengeRuntime(args.config, args.slug)
          : await subnetStatus(args.config);
        print(args.json, body, text);
        return;
      }
      const base = masterUrl(args.master);
      const path = `/v1/challenges/${encodeURIComponent(args.slug)}/submissions/${encodeURIComponent(args.submission_id)}`;
      const interval = Math.max(1, Number(args.interval) || 5) * 1000;
      let last = "";
      for (;;) {
        const { body } = await callMaster<Record<string, unknown>>(base, path);
        const status = String(body.status ?? "");
        if (!args.watch || TERMINAL.has(status) || WAITING.has(status)) {
          print(args.json, body, () => describe(body));
          return;
        }
        if (status !== last && !args.json)
          process.stderr.write(`${new Date().toISOString()} ${status}\n`);
        last = status;
        await sleep(interval);
      }
    }),
});
