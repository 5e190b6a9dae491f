/** The API version the master reports in its registry (spec: default "1.0"). */
export const MASTER_API_VERSION = "1.0";
