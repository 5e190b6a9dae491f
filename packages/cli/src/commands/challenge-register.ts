import { defineCommand } from "citty";
import { loadAdminConnection } from "./_admin-config.js";
import { callMaster } from "./_master-client.js";
import { CliError, configFlag, jsonFlag, print, runCommand } from "./_shared.js";

/** The record version of an image: its tag, or "latest" when it has none (spec). */
export function versionFromImage(image: string): string {
  const withoutDigest = image.split("@")[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf("/");
  const colon = withoutDigest.indexOf(":", lastSlash + 1);
  return colon === -1 ? "latest" : withoutDigest.slice(colon + 1);
}

/** `platform challenge register <slug> <image> <emission>`. */
export default defineCommand({
  meta: {
    name: "register",
    description:
      "Register a challenge with the master (POST /v1/admin/challenges). Prints its two tokens: the only time they are shown.",
  },
  args: {
    slug: {
      type: "positional",
      description: "Lower-case letters, digits and inner hyphens",
      required: true,
    },
    image: {
      type: "positional",
      description: "Container image; its tag becomes the version (latest without one)",
      required: true,
    },
    emission: {
      type: "positional",
      description: "Emission share in percent (float, 0-100)",
      required: true,
    },
    name: { type: "string", description: "Display name (default: the slug)" },
    "internal-base-url": {
      type: "string",
      description: "Where the master reaches the challenge, e.g. http://10.0.0.5:9000",
      valueHint: "url",
    },
    ...configFlag,
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      const emission = Number(args.emission);
      if (!Number.isFinite(emission) || emission < 0 || emission > 100) {
        throw new CliError(`emission must be a number from 0 to 100, got "${args.emission}"`);
      }
      const connection = loadAdminConnection(args.config);
      const body: Record<string, unknown> = {
        slug: args.slug,
        name: args.name ?? args.slug,
        image: args.image,
        version: versionFromImage(args.image),
        emission_percent: emission,
      };
      if (args["internal-base-url"]) body.internal_base_url = args["internal-base-url"];
      const { body: created } = await callMaster<{
        challenge: { slug: string; status: string; version: string };
        challenge_token: string;
        docker_broker_token: string;
      }>(connection.adminUrl, "/v1/admin/challenges", {
        method: "POST",
        headers: { "content-type": "application/json", "x-admin-token": connection.adminToken },
        body: JSON.stringify(body),
        expect: [201],
      });
      print(args.json, created, () =>
        [
          `registered ${created.challenge.slug} ${created.challenge.version} (status ${created.challenge.status})`,
          "",
          "Give these to the challenge's deployment now; they are not shown again:",
          `  CHALLENGE_TOKEN=${created.challenge_token}`,
          `  BROKER_TOKEN=${created.docker_broker_token}`,
          "",
          `Activate it with: platform challenge activate ${created.challenge.slug}`,
        ].join("\n"),
      );
    }),
});
