import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type DevProjectSettings, projectDevSettings } from "./_dev-project-config.js";
import { CliError } from "./_shared.js";

/** A module `platform dev` will load, and why it was picked. */
export interface ChallengeModuleRef {
  path: string;
  /** explicit: --challenge; project: ./src/challenge.ts; template / example: found in the repository. */
  origin: "explicit" | "project" | "template" | "example";
}

/** What `platform dev` needs of a challenge (the SDK's `Challenge`, structurally: no SDK import here). */
export interface DevChallenge {
  readonly slug: string;
  readonly name: string;
  readonly version: string;
  readonly description: string | undefined;
  start(options: {
    env: Record<string, string | undefined>;
    dataDir: string;
    host: string;
    port: number;
  }): Promise<{ url: string; close(): Promise<void> }>;
}

/** A loaded challenge with what its project says about it (challenge.config.json, when present). */
export interface LoadedChallenge {
  ref: ChallengeModuleRef;
  challenge: DevChallenge;
  /** The project's image, or null (dev registers a local placeholder). */
  image: string | null;
  /** The project's `dev` section: variables dev sets when unset, Docker needs it checks. */
  dev: DevProjectSettings;
}

/** The module a challenge project keeps its challenge in. */
export const PROJECT_MODULE = join("src", "challenge.ts");

const uniqueByRealPath = (refs: ChallengeModuleRef[]) => {
  const seen = new Set<string>();
  return refs.filter((ref) => {
    const key = realpathSync(ref.path);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

/** examples/<name>/src/challenge.ts under `root`, sorted by name. */
function exampleModules(root: string): ChallengeModuleRef[] {
  const dir = join(root, "examples");
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(dir, entry.name, PROJECT_MODULE))
    .filter((path) => existsSync(path))
    .sort()
    .map((path) => ({ path, origin: "example" as const }));
}

/**
 * Which challenges `platform dev` runs: the --challenge modules when given; else, inside a
 * challenge project, its ./src/challenge.ts; else every reference challenge available: the
 * template's and each examples/<name>/src/challenge.ts (of the repository the template sits in,
 * and of the current folder).
 */
export function discoverChallengeModules(options: {
  cwd: string;
  explicit: readonly string[];
  templateDir: string | null;
}): ChallengeModuleRef[] {
  if (options.explicit.length > 0) {
    return uniqueByRealPath(
      options.explicit.map((given) => {
        const path = resolve(options.cwd, given);
        if (!existsSync(path)) throw new CliError(`--challenge ${given}: no such file (${path})`);
        return { path, origin: "explicit" as const };
      }),
    );
  }
  const project = join(options.cwd, PROJECT_MODULE);
  if (existsSync(project)) return [{ path: resolve(project), origin: "project" }];
  const found: ChallengeModuleRef[] = [];
  const roots = [options.cwd];
  if (options.templateDir) {
    const template = join(options.templateDir, PROJECT_MODULE);
    if (existsSync(template)) found.push({ path: template, origin: "template" });
    // <repo>/templates/challenge: the repository's examples/ sit next to templates/.
    const parent = dirname(resolve(options.templateDir));
    if (basename(parent) === "templates") roots.unshift(dirname(parent));
  }
  for (const root of roots) found.push(...exampleModules(root));
  return uniqueByRealPath(found);
}

/** --challenge values from the raw arguments: citty keeps only the last of a repeated flag. */
export function explicitChallenges(rawArgs: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === "--") break;
    if (arg === "--challenge") {
      const value = rawArgs[i + 1];
      if (value === undefined || value.startsWith("--"))
        throw new CliError("--challenge needs a module path");
      out.push(value);
      i++;
    } else if (arg.startsWith("--challenge=")) {
      out.push(arg.slice("--challenge=".length));
    }
  }
  return out;
}

function isChallenge(value: unknown): value is DevChallenge {
  const candidate = value as Partial<DevChallenge> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.slug === "string" &&
    typeof candidate.version === "string" &&
    typeof candidate.start === "function" &&
    typeof (candidate as { routes?: unknown }).routes === "function"
  );
}

/** The challenge a module exports: `challenge`, else the default export, else its only Challenge. */
export function pickChallenge(module: Record<string, unknown>, path: string): DevChallenge {
  for (const key of ["challenge", "default"]) {
    if (isChallenge(module[key])) return module[key];
  }
  const all = Object.values(module).filter(isChallenge);
  if (all.length === 1) return all[0]!;
  throw new CliError(
    all.length === 0
      ? `${path} exports no challenge: export one with \`export const challenge = defineChallenge({...})\``
      : `${path} exports ${all.length} challenges; name the one to run \`challenge\``,
  );
}

let tsxRegistered = false;

/**
 * Import a challenge module. TypeScript goes through tsx's loader, registered on first need
 * (globally, not in a tsx namespace: a namespace gives the module its own copies of every
 * package it imports, two @polkadot/util, two SDKs). Never Node's own type stripping (on by
 * default from 22.18): it does not map a `./identity.js` import to `identity.ts`, which is how
 * every TypeScript ES module spells its imports, so it fails where tsx succeeds. Registering
 * again when the CLI already runs under tsx (from its sources) is harmless.
 */
export async function importModule(path: string): Promise<Record<string, unknown>> {
  if (/\.[cm]?tsx?$/.test(path) && !tsxRegistered) {
    const { register } = await import("tsx/esm/api");
    register();
    tsxRegistered = true;
  }
  return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
}

/** The image a project names in challenge.config.json (next to its src/), or null. */
export function projectImage(modulePath: string): string | null {
  const file = join(dirname(dirname(modulePath)), "challenge.config.json");
  if (!existsSync(file)) return null;
  try {
    const { image } = JSON.parse(readFileSync(file, "utf8")) as { image?: unknown };
    return typeof image === "string" && image.trim() !== "" ? image.trim() : null;
  } catch {
    return null;
  }
}

/** Load one challenge module; throws a CliError saying which module and why. */
export async function loadChallenge(ref: ChallengeModuleRef): Promise<LoadedChallenge> {
  // Before the import: a wrong dev section is cheaper to report than a module to load.
  const dev = projectDevSettings(ref.path);
  let module: Record<string, unknown>;
  try {
    module = await importModule(ref.path);
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new CliError(`cannot load ${ref.path}: ${message}`);
  }
  return {
    ref,
    challenge: pickChallenge(module, ref.path),
    image: projectImage(ref.path),
    dev,
  };
}

/**
 * Load every module `platform dev` found. One the user named (--challenge, or the project's
 * own) must load; a reference one that fails is skipped with a line saying why. Two modules
 * may not define one slug. `checkpoint` runs between modules (a signal stops start-up there).
 */
export async function loadChallenges(
  refs: readonly ChallengeModuleRef[],
  options: { progress: (line: string) => void; checkpoint: () => void },
): Promise<LoadedChallenge[]> {
  const loaded: LoadedChallenge[] = [];
  for (const ref of refs) {
    options.progress(`loading ${ref.path}`);
    try {
      loaded.push(await loadChallenge(ref));
    } catch (error) {
      if (ref.origin === "explicit" || ref.origin === "project") throw error;
      options.progress(`skipping it: ${(error as Error).message}`);
    }
    options.checkpoint();
  }
  const slugs = loaded.map((item) => item.challenge.slug);
  const duplicate = slugs.find((slug, index) => slugs.indexOf(slug) !== index);
  if (duplicate) throw new CliError(`two modules define the challenge "${duplicate}"`);
  return loaded;
}
