import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Import a package's `src/version.ts` (`versionModule`) from a copy beside a package.json whose
 * version is `version`, to prove the module reads its package.json instead of a hard-coded
 * string. The copy keeps the package's name, so a module that resolves its own
 * `<name>/package.json` finds the bumped one. Answers the module's exports.
 * @example await importWithVersion(new URL("./version.ts", import.meta.url), "9.8.7")
 */
export async function importWithVersion(
  versionModule: URL,
  version: string,
): Promise<Record<string, unknown>> {
  const source = fileURLToPath(versionModule);
  const manifest = JSON.parse(
    readFileSync(join(dirname(source), "..", "package.json"), "utf8"),
  ) as {
    name: string;
  };
  const root = mkdtempSync(join(tmpdir(), "version-module-"));
  try {
    mkdirSync(join(root, "src"));
    copyFileSync(source, join(root, "src", "version.ts"));
    writeFileSync(
      join(root, "package.json"),
      JSON.stringify({
        name: manifest.name,
        version,
        type: "module",
        exports: { "./package.json": "./package.json" },
      }),
    );
    return (await import(join(root, "src", "version.ts"))) as Record<string, unknown>;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
