/**
 * @platform/core: what every platform package builds on. Signing (miner requests), auth
 * (bearer tokens), the HTTP app kit, the database layer and the shared TypeBox records.
 */
export * from "./auth/index.js";
export * from "./db/index.js";
export * from "./http/index.js";
export * from "./schemas/index.js";
export * from "./signing/index.js";
