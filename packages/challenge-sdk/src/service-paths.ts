// The paths of the internal routes every challenge serves (service-routes.ts), alone in a file
// with no imports, so the testing entry's conformance checks can use them without bundling the
// routes themselves.

/** Where the master polls weights. */
export const GET_WEIGHTS_PATH = "/internal/v1/get_weights";

/** Where Prometheus scrapes a challenge (the challenge token as `Authorization: Bearer`). */
export const METRICS_PATH = "/internal/v1/metrics";
