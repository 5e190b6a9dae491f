/** @platform/challenge-sdk: the toolkit a challenge author installs. Grows in the SDK issue. */
export { SDK_VERSION } from "./version.js";
