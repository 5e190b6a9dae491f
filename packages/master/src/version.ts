import { createRequire } from "node:module";

/** The API version the master reports in its registry (spec: default "1.0"). */
export const MASTER_API_VERSION = "1.0";

// Read at run time through the package's own name (its exports list ./package.json), so the
// answer is the installed package.json whether this runs from src/ or from a bundled dist/ file.
const manifest = createRequire(import.meta.url)("@platform/master/package.json") as {
  version: string;
};

/** The master's own release (its package.json), reported by GET /version. */
export const MASTER_VERSION: string = manifest.version;
