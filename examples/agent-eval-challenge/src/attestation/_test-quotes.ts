// Quote fixtures shared by this folder's tests (private: nothing outside the folder imports it).

import { generateKeyPairSync } from "node:crypto";
import { devQuoteBody, loadDevAttestationKey, signQuoteBody } from "./dev-quote.js";
import type { TdQuoteBody } from "./tdx-quote.js";

export const devKey = loadDevAttestationKey();

/** A 64-byte report_data with a recognisable pattern (not all zero, so padding bugs show). */
export function sampleReportData(seed = 7): Buffer {
  return Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 31 + seed) & 0xff));
}

export function freshPrivateKeyPem(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

/** A signed quote with any body overrides (signDevQuote only exposes mrtd and rtmrs). */
export function signQuoteWith(
  privateKeyPem: string,
  overrides: Partial<TdQuoteBody> & { reportData: Buffer },
): Buffer {
  const body = { ...devQuoteBody(overrides.reportData), ...overrides };
  return signQuoteBody(privateKeyPem, body, Buffer.from("test certification data"));
}
