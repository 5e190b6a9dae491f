/**
 * How both reference workers attest in development: the VM as this host sees it (within the
 * schemas' bounds), the development MRTD, and quotes signed with the development key whose RTMRs
 * replay the worker's event log. A TD would take all of it from its hardware instead.
 */
import { availableParallelism, totalmem } from "node:os";
import {
  DEV_MEASUREMENT,
  type EventLogEntry,
  loadDevAttestationKey,
  replayEventLog,
  signDevQuote,
  type VmAttestationInput,
} from "../attestation/index.js";

export function devAttestation(
  settings: { devAttestationKeyFile: string | undefined; imageDigest: string },
  eventLog: EventLogEntry[],
): VmAttestationInput {
  const key = loadDevAttestationKey(settings.devAttestationKeyFile);
  return {
    eventLog,
    vmConfig: {
      vcpus: Math.min(1024, availableParallelism()),
      memory_mib: Math.min(16_777_216, Math.max(1, Math.floor(totalmem() / 1024 / 1024))),
      image_digest: settings.imageDigest,
    },
    measurement: DEV_MEASUREMENT,
    quote: (reportData) =>
      signDevQuote({
        privateKeyPem: key.privateKeyPem,
        reportData,
        mrtd: DEV_MEASUREMENT,
        rtmrs: replayEventLog(eventLog),
      }),
  };
}
