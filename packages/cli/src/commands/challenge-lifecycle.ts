import { defineCommand } from "citty";
import { loadAdminConnection } from "./_admin-config.js";
import { callMaster } from "./_master-client.js";
import { configFlag, jsonFlag, print, runCommand } from "./_shared.js";

interface Outcome {
  slug?: string;
  status?: string;
  operation?: string;
  detail?: string | null;
}

function lifecycle(action: "activate" | "deactivate" | "pull" | "restart", description: string) {
  return defineCommand({
    meta: {
      name: action,
      description: `${description} (POST /v1/admin/challenges/{slug}/${action})`,
    },
    args: {
      slug: { type: "positional", description: "The challenge's slug", required: true },
      ...configFlag,
      ...jsonFlag,
    },
    run: ({ args }) =>
      runCommand(async () => {
        const connection = loadAdminConnection(args.config);
        const { body } = await callMaster<Outcome>(
          connection.adminUrl,
          `/v1/admin/challenges/${encodeURIComponent(args.slug)}/${action}`,
          {
            method: "POST",
            headers: { "x-admin-token": connection.adminToken },
            // Pulling a large image can take minutes.
            signal: AbortSignal.timeout(
              action === "pull" || action === "restart" ? 30 * 60_000 : 60_000,
            ),
          },
        );
        print(args.json, body, () =>
          body.operation
            ? `${body.operation} ${body.slug}: ${body.status}${body.detail ? ` (${body.detail})` : ""}`
            : `${body.slug} is now ${body.status}`,
        );
      }),
  });
}

/** `platform challenge activate <slug>`. */
export const activate = lifecycle(
  "activate",
  "Serve the challenge's traffic and count its weights",
);
/** `platform challenge deactivate <slug>`. */
export const deactivate = lifecycle(
  "deactivate",
  "Stop serving the challenge and counting its weights",
);
/** `platform challenge pull <slug>`. */
export const pull = lifecycle("pull", "Pull the challenge's image on the master's Docker engine");
/** `platform challenge restart <slug>`. */
export const restart = lifecycle(
  "restart",
  "Create or replace the challenge's container from its registry record",
);
