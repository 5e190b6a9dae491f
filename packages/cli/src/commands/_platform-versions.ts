import { createRequire } from "node:module";
import { CliError } from "./_shared.js";

/** A @platform package's name -> the version a created project should ask for. */
export type PlatformVersions = (name: string) => string;

/**
 * Each @platform package's own version, read from its installed package.json as this CLI
 * resolves it: the CLI's own for `@platform/cli`, the SDK's for `@platform/challenge-sdk`. The
 * CLI depends on its siblings at the exact versions released with it, so these are the released
 * versions; two packages of one release need not share a number (a release that bumps the CLI
 * alone leaves the SDK where it was), which is why no version is assumed from another.
 */
export function installedPlatformVersions(from: string | URL = import.meta.url): PlatformVersions {
  const require = createRequire(from);
  const cache = new Map<string, string>();
  return (name) => {
    let version = cache.get(name);
    if (version === undefined) {
      try {
        version = (require(`${name}/package.json`) as { version: string }).version;
      } catch {
        throw new CliError(
          `the template asks for ${name}, which this installation of @platform/cli cannot find (reinstall it)`,
        );
      }
      cache.set(name, version);
    }
    return version;
  };
}
