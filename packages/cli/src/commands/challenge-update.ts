import { defineCommand } from "citty";
import { loadAdminConnection } from "./_admin-config.js";
import { explain } from "./_master-client.js";
import { CliError, configFlag, jsonFlag, print, runCommand } from "./_shared.js";
import { serverEvents } from "./_sse-events.js";

interface Outcome {
  slug: string;
  operation: string;
  status: string;
  detail?: string | null;
}

interface Progress {
  step: string;
  detail: string;
}

/** `platform challenge update <slug> --image <ref>`: the update by digest, step by step. */
export default defineCommand({
  meta: {
    name: "update",
    description:
      "Run a new image: started beside the old container, served once ready, rolled back if not (POST /v1/admin/challenges/{slug}/update)",
  },
  args: {
    slug: { type: "positional", description: "The challenge's slug", required: true },
    image: { type: "string", description: "The new image reference", required: true },
    ...configFlag,
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      const outcome = await follow(args.config, args.slug, args.image, args.json);
      print(
        args.json,
        outcome,
        () =>
          `update ${outcome.slug}: ${outcome.status}${outcome.detail ? ` (${outcome.detail})` : ""}`,
      );
      if (outcome.status === "rolled_back")
        throw new CliError(
          `the update was rolled back; ${outcome.slug} still runs its previous image`,
        );
    }),
});

/** POST the update as a stream, print each step (stderr), and answer its result. */
async function follow(
  config: string | undefined,
  slug: string,
  image: string,
  json: boolean,
): Promise<Outcome> {
  const connection = loadAdminConnection(config);
  const path = `/v1/admin/challenges/${encodeURIComponent(slug)}/update`;
  let response: Response;
  try {
    response = await fetch(`${connection.adminUrl}${path}?stream=1`, {
      method: "POST",
      headers: {
        "x-admin-token": connection.adminToken,
        "content-type": "application/json",
        accept: "text/event-stream",
      },
      body: JSON.stringify({ image }),
      redirect: "manual",
      // A pull and a readiness wait can take minutes.
      signal: AbortSignal.timeout(30 * 60_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new CliError(`cannot reach the master at ${connection.adminUrl} (${cause})`);
  }
  if (response.status !== 200 || !response.body) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: the text is the detail.
    }
    throw new CliError(explain(response.status, body, path));
  }
  for await (const { event, data } of serverEvents(response.body)) {
    if (event === "progress" && !json) {
      const step = data as Progress;
      process.stderr.write(`  ${step.step.replace("_", " ")}: ${step.detail}\n`);
    }
    if (event === "result") return data as Outcome;
    if (event === "error")
      throw new CliError(`the update failed: ${(data as { message?: string }).message}`);
  }
  throw new CliError("the master closed the stream before the update's outcome");
}
