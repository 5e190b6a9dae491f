/** @platform/master: the subnet's control plane. Grows in the control-plane and broker issues. */
export { MASTER_API_VERSION } from "./version.js";
