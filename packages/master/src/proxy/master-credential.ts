import { secretsEqual } from "@platform/core";
import type { MasterCredentialCheck } from "./forward-headers.js";

/**
 * The check the passthrough runs on a client's Authorization before forwarding it: true when it
 * carries the master's admin token (`Bearer <token>` or the bare token), compared in constant
 * time, so an admin client pointed at the public listener by mistake never hands the token to a
 * challenge. No admin token configured: nothing is a master credential.
 */
export function masterCredentialCheck(adminToken: string): MasterCredentialCheck {
  if (adminToken === "") return () => false;
  return (authorization) => {
    const match = /^\s*(?:Bearer\s+)?(\S+)\s*$/i.exec(authorization);
    return match !== null && secretsEqual(match[1]!, adminToken);
  };
}
