export { ConfigError, type ConfigIssue } from "./config-error.js";
export { readEnvironment } from "./read-environment.js";
