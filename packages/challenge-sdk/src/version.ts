import { createRequire } from "node:module";

// Read at run time through the package's own name (its exports list ./package.json), so the
// answer is the installed package.json whether this runs from src/ or from a bundled dist/ file.
const manifest = createRequire(import.meta.url)("@platform/challenge-sdk/package.json") as {
  version: string;
};

/** The SDK's own version (its package.json), reported by every challenge's GET /version. */
export const SDK_VERSION: string = manifest.version;
