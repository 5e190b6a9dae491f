import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { isSlug, SLUG_MAX_LENGTH, SLUG_PATTERN } from "@platform/core";
import type { PlatformVersions } from "./_platform-versions.js";
import { CliError } from "./_shared.js";

// Where the template sits relative to this code, first match wins: the built CLI carries a copy
// in dist/template (the build step copies it there); from sources, the repository's own
// templates/challenge is the one to use, so an edit there shows at once.
const TEMPLATE_CANDIDATES = [
  "./template/", // dist/cli.js -> dist/template
  "../../../../templates/challenge/", // src/commands/_template.ts -> <repo>/templates/challenge
  "../../dist/template/", // src/commands/_template.ts -> packages/cli/dist/template
];

/** Files and folders of the template never copied: installs, builds and local databases. */
export const TEMPLATE_SKIP = new Set([
  "node_modules",
  "dist",
  ".platform",
  "package-lock.json",
  ".DS_Store",
]);

/** The file names renamed on copy: npm drops a published `.gitignore`, so it travels as `_gitignore`. */
export const TEMPLATE_RENAMES: Readonly<Record<string, string>> = { _gitignore: ".gitignore" };

/** The file that holds a project's identity: the one place `challenge create` fills in. */
export const IDENTITY_FILE = "challenge.config.json";

/** The challenge template's folder, in the source or the built layout of the CLI. */
export function findTemplateDir(from: string | URL = import.meta.url): string {
  for (const candidate of TEMPLATE_CANDIDATES) {
    const dir = fileURLToPath(new URL(candidate, from));
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, IDENTITY_FILE))) return dir;
  }
  throw new CliError(
    "the challenge template is missing from this installation of @platform/cli (reinstall it)",
  );
}

/** Why `slug` cannot name a challenge (the registry's rule), or null when it can. */
export function slugProblem(slug: string): string | null {
  if (slug.length < 2 || slug.length > SLUG_MAX_LENGTH)
    return `it must be 2 to ${SLUG_MAX_LENGTH} characters long`;
  if (!isSlug(slug)) return `use lower-case letters, digits and inner hyphens (${SLUG_PATTERN})`;
  if (slug === "sdk") return '"sdk" is reserved for the SDK\'s own tables';
  return null;
}

/** A display name from a slug: "my-chal" -> "My Chal". */
export function nameFromSlug(slug: string): string {
  return slug
    .split("-")
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(" ");
}

/** What a new project is called and which versions it starts from. */
export interface ProjectIdentity {
  slug: string;
  name: string;
  version: string;
  image: string | null;
}

/** The files of a folder, relative to it, skipping {@link TEMPLATE_SKIP}; sorted. */
export function templateFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (TEMPLATE_SKIP.has(entry.name) || entry.name.endsWith(".tsbuildinfo")) continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

/** Where a template file lands: the same path, with `_gitignore` renamed to `.gitignore`. */
export function targetPath(file: string): string {
  const parts = file.split(/[\\/]/);
  const last = parts.pop()!;
  return join(...parts, TEMPLATE_RENAMES[last] ?? last);
}

/**
 * The only rewrites: package.json's "name" (the slug) and its @platform/* ranges (`^` each
 * package's own released version, from `versions`), and the identity in challenge.config.json.
 * Everything else is copied byte for byte.
 */
export function rewriteFile(
  file: string,
  content: Buffer,
  identity: ProjectIdentity,
  versions: PlatformVersions,
): Buffer {
  if (file === "package.json") {
    const pkg = JSON.parse(content.toString("utf8")) as Record<string, unknown>;
    pkg["name"] = identity.slug;
    for (const field of ["dependencies", "devDependencies", "peerDependencies"]) {
      const deps = pkg[field] as Record<string, string> | undefined;
      for (const dep of Object.keys(deps ?? {})) {
        if (dep.startsWith("@platform/")) deps![dep] = `^${versions(dep)}`;
      }
    }
    return Buffer.from(`${JSON.stringify(pkg, null, 2)}\n`);
  }
  if (file === IDENTITY_FILE) {
    const config = JSON.parse(content.toString("utf8")) as Record<string, unknown>;
    Object.assign(config, {
      slug: identity.slug,
      name: identity.name,
      version: identity.version,
      image: identity.image,
    });
    return Buffer.from(`${JSON.stringify(config, null, 2)}\n`);
  }
  return content;
}

/** Write the template into `outDir` (created if needed) for `identity`; returns the files written. */
export function writeProject(
  templateDir: string,
  outDir: string,
  identity: ProjectIdentity,
  versions: PlatformVersions,
): string[] {
  const written: string[] = [];
  for (const file of templateFiles(templateDir)) {
    const target = join(outDir, targetPath(file));
    mkdirSync(dirname(target), { recursive: true });
    const content = rewriteFile(file, readFileSync(join(templateDir, file)), identity, versions);
    writeFileSync(target, content, { mode: statSync(join(templateDir, file)).mode & 0o777 });
    written.push(relative(outDir, target));
  }
  return written.sort();
}
