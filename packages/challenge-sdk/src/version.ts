/** The SDK's own version, reported by every challenge's GET /version. */
export const SDK_VERSION = "0.0.0";
