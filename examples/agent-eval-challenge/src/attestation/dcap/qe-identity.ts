// Intel's identity of the TDX Quoting Enclave (id "TD_QE"): who signs it (MRSIGNER), which
// product (ISVPRODID), which MISCSELECT and ATTRIBUTES bits under their masks, and the status
// of each ISVSVN level. The QE report is held to it, so a quote produced by any other enclave
// (or a debug QE) is refused even if a PCK key signed its report.

import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { chainError } from "./dcap-error.js";
import type { EnclaveReport } from "./enclave-report.js";
import { TCB_STATUSES, type TcbVerdict } from "./tcb-status.js";

const Hex = (bytes: number) => Type.String({ pattern: `^[0-9a-fA-F]{${2 * bytes}}$` });
export const QeIdentitySchema = Type.Object({
  id: Type.Literal("TD_QE"),
  version: Type.Literal(2),
  issueDate: Type.String(),
  nextUpdate: Type.String(),
  miscselect: Hex(4),
  miscselectMask: Hex(4),
  attributes: Hex(16),
  attributesMask: Hex(16),
  mrsigner: Hex(32),
  isvprodid: Type.Integer({ minimum: 0, maximum: 0xffff }),
  tcbLevels: Type.Array(
    Type.Object({
      tcb: Type.Object({ isvsvn: Type.Integer({ minimum: 0 }) }),
      tcbStatus: Type.Union(TCB_STATUSES.map((s) => Type.Literal(s))),
      advisoryIDs: Type.Optional(Type.Array(Type.String())),
    }),
    { minItems: 1 },
  ),
});
export type QeIdentity = Static<typeof QeIdentitySchema>;

export function parseQeIdentity(raw: string): QeIdentity {
  const value: unknown = JSON.parse(raw);
  if (!Value.Check(QeIdentitySchema, value)) {
    throw chainError("qe_identity_malformed", "the QE identity is not a TD_QE identity v2");
  }
  return value;
}

const maskedEqual = (actual: Buffer, expectedHex: string, maskHex: string) => {
  const expected = Buffer.from(expectedHex, "hex");
  const mask = Buffer.from(maskHex, "hex");
  return mask.every((m, i) => (actual[i]! & m) === (expected[i]! & m));
};

export function matchQeIdentity(identity: QeIdentity, report: EnclaveReport): TcbVerdict {
  const mismatch = (what: string) =>
    chainError("qe_identity_mismatch", `the QE report's ${what} is not the QE identity's`);
  if (report.mrSigner.toString("hex") !== identity.mrsigner.toLowerCase()) {
    throw mismatch("MRSIGNER");
  }
  if (report.isvProdId !== identity.isvprodid) throw mismatch("ISVPRODID");
  if (!maskedEqual(report.miscSelect, identity.miscselect, identity.miscselectMask)) {
    throw mismatch("MISCSELECT");
  }
  if (!maskedEqual(report.attributes, identity.attributes, identity.attributesMask)) {
    throw mismatch("ATTRIBUTES");
  }
  const level = identity.tcbLevels.find((l) => report.isvSvn >= l.tcb.isvsvn);
  if (!level) {
    throw chainError(
      "qe_identity_isvsvn_too_low",
      `the QE's ISVSVN ${report.isvSvn} is below every level of the QE identity`,
    );
  }
  return { status: level.tcbStatus, advisoryIds: level.advisoryIDs ?? [] };
}
