// What a confidential VM attaches to a document it posts (a review envelope, an eval result),
// built one way for both so both are checked one way (verify-attestation.ts).
import type { EventLogEntry } from "./event-log.js";

/** How the VM attests: its event log, its shape, the MRTD it claims and a quote maker. */
export interface VmAttestationInput {
  eventLog: EventLogEntry[];
  vmConfig: { vcpus: number; memory_mib: number; image_digest: string };
  /** The VM's MRTD, as the quote will carry it. */
  measurement: string;
  /** Produces the quote for these 64 report_data bytes (a TD's quote, or a development one). */
  quote: (reportData: Buffer) => Buffer | Promise<Buffer>;
}

/** The document's `attestation`: the quote over `reportData` and what it attests. */
export async function vmAttestation(input: VmAttestationInput, reportData: Buffer) {
  const quote = await input.quote(reportData);
  return {
    quote: quote.toString("base64"),
    event_log: input.eventLog,
    measurement: input.measurement,
    vm_config: input.vmConfig,
  };
}
