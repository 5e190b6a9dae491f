/** @platform/cli: the `platform` binary's command tree, importable for tests and embedding. */
export { main } from "./main.js";
