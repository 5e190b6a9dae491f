import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CliError } from "./_shared.js";

/**
 * A variable `platform dev` sets for a challenge when the user has not: `value`, unless one of
 * the `unless` variables is set (a setting that makes the default wrong, e.g. LLM_GATE=off
 * unless LLM_BASE_URL names a model server). `note` is what dev prints when it applies it.
 */
export interface DevEnvDefault {
  value: string;
  unless: string[];
  note: string | null;
}

/** An image the challenge runs, and the one command that builds it when it is missing. */
export interface DevImage {
  image: string;
  /** The variable that overrides the image in the challenge's environment, if any. */
  env: string | null;
  /** A shell command; `{project}` stands for the project folder, relative to where dev runs. */
  build: string | null;
}

/** The challenge runs work on a Docker engine: dev says when none answers or an image is missing. */
export interface DevDockerNeeds {
  /** What the challenge does without an engine (appended to "no Docker engine answers"). */
  note: string | null;
  images: DevImage[];
}

/** The `dev` section of a project's challenge.config.json. */
export interface DevProjectSettings {
  env: Record<string, DevEnvDefault>;
  docker: DevDockerNeeds | null;
}

/** No dev section: nothing to apply, nothing to check. */
export const NO_DEV_SETTINGS: DevProjectSettings = Object.freeze({ env: {}, docker: null });

// An environment variable name as POSIX shells write one.
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Variables `platform dev` itself decides for every challenge (its database, address, tokens,
 * master, log level): a project default may not replace them.
 */
export const DEV_MANAGED_VARIABLES: readonly string[] = [
  "DATABASE_URL",
  "DATA_DIR",
  "PORT",
  "HOST",
  "ADMIN_TOKEN",
  "ADMIN_TOKEN_FILE",
  "CHALLENGE_TOKEN",
  "BROKER_TOKEN",
  "LOG_LEVEL",
];
const isManaged = (name: string) =>
  DEV_MANAGED_VARIABLES.includes(name) || name.startsWith("PLATFORM_");

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Reads the `dev` section, refusing anything it does not understand (a typo must not pass). */
class SectionReader {
  constructor(private readonly file: string) {}

  fail(path: string, message: string): never {
    throw new CliError(`${this.file}: ${path}: ${message}`);
  }

  keys(value: Json, path: string, allowed: readonly string[]): void {
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key))
        this.fail(`${path}.${key}`, `unknown field (expected ${allowed.join(", ")})`);
    }
  }

  object(value: unknown, path: string): Json {
    if (!isObject(value)) this.fail(path, "must be an object");
    return value;
  }

  text(value: unknown, path: string): string {
    if (typeof value !== "string" || value.trim() === "")
      this.fail(path, "must be a non-empty string");
    return value;
  }

  optionalText(value: unknown, path: string): string | null {
    return value === undefined || value === null ? null : this.text(value, path);
  }

  variable(value: unknown, path: string): string {
    const name = this.text(value, path);
    if (!VARIABLE.test(name)) this.fail(path, `"${name}" is not an environment variable name`);
    return name;
  }

  envDefault(name: string, value: unknown): DevEnvDefault {
    const path = `dev.env.${name}`;
    if (!VARIABLE.test(name)) this.fail(path, "not an environment variable name");
    if (isManaged(name)) this.fail(path, "platform dev sets this variable itself");
    if (typeof value === "string") return { value, unless: [], note: null };
    const rule = this.object(value, path);
    this.keys(rule, path, ["value", "unless", "note"]);
    if (typeof rule.value !== "string") this.fail(`${path}.value`, "must be a string");
    const unless =
      rule.unless === undefined
        ? []
        : Array.isArray(rule.unless)
          ? rule.unless.map((item, i) => this.variable(item, `${path}.unless[${i}]`))
          : [this.variable(rule.unless, `${path}.unless`)];
    return { value: rule.value, unless, note: this.optionalText(rule.note, `${path}.note`) };
  }

  docker(value: unknown): DevDockerNeeds {
    const docker = this.object(value, "dev.docker");
    this.keys(docker, "dev.docker", ["note", "images"]);
    const images = docker.images ?? [];
    if (!Array.isArray(images)) this.fail("dev.docker.images", "must be an array");
    return {
      note: this.optionalText(docker.note, "dev.docker.note"),
      images: images.map((item, i) => {
        const path = `dev.docker.images[${i}]`;
        const image = this.object(item, path);
        this.keys(image, path, ["image", "env", "build"]);
        return {
          image: this.text(image.image, `${path}.image`),
          env: image.env === undefined ? null : this.variable(image.env, `${path}.env`),
          build: this.optionalText(image.build, `${path}.build`),
        };
      }),
    };
  }

  dev(value: unknown): DevProjectSettings {
    const dev = this.object(value, "dev");
    this.keys(dev, "dev", ["env", "docker"]);
    const env = dev.env === undefined ? {} : this.object(dev.env, "dev.env");
    return {
      env: Object.fromEntries(
        Object.entries(env).map(([name, rule]) => [name, this.envDefault(name, rule)]),
      ),
      docker: dev.docker === undefined ? null : this.docker(dev.docker),
    };
  }
}

/** The project folder of a challenge module (`<project>/src/challenge.ts`). */
export function projectDir(modulePath: string): string {
  return dirname(dirname(modulePath));
}

/**
 * The `dev` section of the challenge.config.json next to the module's src/: the variables dev
 * sets when the user has not, and what it checks on the Docker engine. A file that is not JSON
 * has no dev section (as for its image); a dev section that is wrong is a CliError naming the
 * field, so a typo never silently drops a default.
 */
export function projectDevSettings(modulePath: string): DevProjectSettings {
  const file = join(projectDir(modulePath), "challenge.config.json");
  if (!existsSync(file)) return NO_DEV_SETTINGS;
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return NO_DEV_SETTINGS;
  }
  if (!isObject(config) || config.dev === undefined) return NO_DEV_SETTINGS;
  return new SectionReader(file).dev(config.dev);
}
