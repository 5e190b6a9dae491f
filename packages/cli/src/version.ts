import { createRequire } from "node:module";

// Read at run time through the package's own name (its exports list ./package.json), so the
// answer is the installed package.json whether this runs from src/ or from a bundled dist/ file.
const manifest = createRequire(import.meta.url)("@platform/cli/package.json") as {
  version: string;
};

/** The CLI's own version (its package.json): what `platform --version` prints. */
export const CLI_VERSION: string = manifest.version;
