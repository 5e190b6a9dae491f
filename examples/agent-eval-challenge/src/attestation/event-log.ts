// The TD's runtime event log: what was measured into the four runtime measurement registers
// (RTMR0..3) after boot, one entry per extend. A quote carries only the registers' final values;
// the log says what produced them. Replaying the log (RTMR := sha384(RTMR || digest), from 48 zero
// bytes) must give exactly the quote's registers, else the log describes some other boot.
//
// The reference review worker extends RTMR3 with what it reviews under (its own version, the
// rules revision, the artifact hash), so a verified quote also pins those inputs.

import { createHash } from "node:crypto";

export const RTMR_COUNT = 4;
export const MEASUREMENT_BYTES = 48;
export const MAX_EVENT_LOG_ENTRIES = 64;

export interface EventLogEntry {
  /** Which runtime register the entry extended (0..3). */
  readonly imr: number;
  /** A short description of what was measured (not hashed: the digest is). */
  readonly event: string;
  /** sha384 hex of what was measured: the value extended into the register. */
  readonly digest: string;
}

/** The four registers after replaying `entries` from zero, as lowercase hex. */
export function replayEventLog(
  entries: readonly EventLogEntry[],
): [string, string, string, string] {
  const registers = Array.from({ length: RTMR_COUNT }, () => Buffer.alloc(MEASUREMENT_BYTES));
  for (const entry of entries) {
    if (!Number.isInteger(entry.imr) || entry.imr < 0 || entry.imr >= RTMR_COUNT) {
      throw new RangeError(`event log imr must be 0..3, got ${entry.imr}`);
    }
    if (!/^[0-9a-f]{96}$/.test(entry.digest)) {
      throw new RangeError("event log digest must be 48 bytes of lowercase hex");
    }
    registers[entry.imr] = createHash("sha384")
      .update(registers[entry.imr]!)
      .update(Buffer.from(entry.digest, "hex"))
      .digest();
  }
  return registers.map((register) => register.toString("hex")) as [string, string, string, string];
}

/** An entry measuring `value` (its sha384) into register `imr`. */
export function measuredEvent(imr: number, event: string, value: string | Buffer): EventLogEntry {
  return { imr, event, digest: createHash("sha384").update(value).digest("hex") };
}

/** The runtime register a worker extends with its workload's inputs (RTMR3: after boot). */
export const WORKLOAD_RTMR = 3;

/** `events` (`[event, value]`, in the order measured) as RTMR3 entries. */
export function workloadEvents(events: readonly [string, string][]): EventLogEntry[] {
  return events.map(([event, value]) => measuredEvent(WORKLOAD_RTMR, event, value));
}
