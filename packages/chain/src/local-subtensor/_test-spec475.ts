import { fileURLToPath } from "node:url";
import { loadRuntime, type Runtime } from "./_runtime.js";

/**
 * Finney's spec-475 runtime metadata (V14), a test vector only: the local subtensor does not
 * serve it. It lives in test-data/, outside the npm package (provenance: test-data/README.md).
 */
export const SPEC475_METADATA_PATH = fileURLToPath(
  new URL("../../test-data/finney-spec475-metadata-v14.scale", import.meta.url),
);

/** The sha256 the source publishes for the decoded metadata bytes. */
export const SPEC475_METADATA_SHA256 =
  "e181ddacd13d1050e82a2afea8e58ba5d3fc84504fa92d2884c91df8c9dd8020";

/** Loads the spec-475 vector with the same loader the served runtimes use. */
export function loadSpec475Runtime(): Runtime {
  return loadRuntime(SPEC475_METADATA_PATH);
}
