/** The API version the master reports in its registry (spec: default "1.0"). */
export const MASTER_API_VERSION = "1.0";

/** The master's own release, reported by GET /version. */
export const MASTER_VERSION = "0.0.0";
