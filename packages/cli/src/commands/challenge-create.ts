import { existsSync, readdirSync, statSync } from "node:fs";
import { relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { installedPlatformVersions } from "./_platform-versions.js";
import { CliError, jsonFlag, print, runCommand } from "./_shared.js";
import {
  findTemplateDir,
  nameFromSlug,
  type ProjectIdentity,
  slugProblem,
  writeProject,
} from "./_template.js";

/** Refuse what the registry or the SDK would refuse later, with the reason, before writing anything. */
function identityFrom(args: {
  slug: string;
  name?: string;
  image?: string;
  version?: string;
}): ProjectIdentity {
  const problem = slugProblem(args.slug);
  if (problem) throw new CliError(`"${args.slug}" is not a valid challenge slug: ${problem}`);
  const version = args.version ?? "0.1.0";
  if (!/^[0-9A-Za-z][0-9A-Za-z.+_-]{0,127}$/.test(version)) {
    throw new CliError(`--version "${version}" must be a version such as 0.1.0`);
  }
  const name = (args.name ?? nameFromSlug(args.slug)).trim();
  if (name.length === 0 || name.length > 128)
    throw new CliError("--name must be 1 to 128 characters");
  const image = args.image?.trim() || null;
  if (image !== null && (image.length > 512 || /\s/.test(image))) {
    throw new CliError(
      `--image "${image}" is not an image reference (e.g. ghcr.io/you/${args.slug}:${version})`,
    );
  }
  return { slug: args.slug, name, version, image };
}

/** `platform challenge create <slug> --out DIR`: a new challenge project from the built-in template. */
export default defineCommand({
  meta: {
    name: "create",
    description: "Write a new challenge project from the built-in template (needs no master)",
  },
  args: {
    slug: {
      type: "positional",
      description: "The new challenge's slug: lower-case letters, digits and inner hyphens",
      required: true,
    },
    out: { type: "string", description: "Destination folder", required: true, valueHint: "dir" },
    name: {
      type: "string",
      description: 'Display name (default: from the slug, "my-chal" -> "My Chal")',
    },
    image: {
      type: "string",
      description: "Container image, e.g. ghcr.io/you/my-chal:0.1.0 (default: none yet)",
    },
    version: { type: "string", description: "The challenge's version", default: "0.1.0" },
    overwrite: {
      type: "boolean",
      description:
        "Write into a folder that is not empty (the template's files replace theirs; others stay)",
      default: false,
    },
    ...jsonFlag,
  },
  run: ({ args }) =>
    runCommand(async () => {
      const identity = identityFrom(args);
      const out = resolve(args.out);
      if (existsSync(out)) {
        if (!statSync(out).isDirectory()) throw new CliError(`${out} exists and is not a folder`);
        if (readdirSync(out).length > 0 && !args.overwrite) {
          throw new CliError(
            `${out} is not empty; choose another --out, or pass --overwrite to write the template's files into it`,
          );
        }
      }
      const files = writeProject(findTemplateDir(), out, identity, installedPlatformVersions());
      const fromHere = relative(process.cwd(), out);
      const where = fromHere === "" ? "." : fromHere.startsWith("..") ? out : fromHere;
      print(args.json, { ...identity, dir: out, files }, () =>
        [
          `Created ${identity.name} (${identity.slug} ${identity.version}) in ${where}`,
          "",
          "Next steps:",
          ...(where === "." ? [] : [`  cd ${where}`]),
          "  npm install",
          "  npm test          # the conformance suite and the challenge's own tests",
          "  npm run dev       # a local master with this challenge behind it, ready for submissions",
          "",
          "Its identity (slug, name, version, image) lives in challenge.config.json;",
          "README.md says how to build the image and register it with a master.",
        ].join("\n"),
      );
    }),
});
