// Intel's TDX TCB info (version 3, id "TDX"): for one platform family (FMSPC), the TCB levels
// from newest to oldest, each with the SGX component SVNs, the PCE SVN and the TDX TEE TCB SVNs
// it requires and the status (and advisories) a platform at that level has; and the identity
// of the TDX module (SEAM) signer. Matched as Intel's QVL does: the first level the platform
// meets wins; the TDX module's own level comes from its identity when its version is not 0.

import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { TdQuoteBody } from "../tdx-quote.js";
import { chainError } from "./dcap-error.js";
import type { PckExtensions } from "./pck-extensions.js";
import { mergeTcb, TCB_STATUSES, type TcbVerdict } from "./tcb-status.js";

const Hex = (bytes: number) => Type.String({ pattern: `^[0-9a-fA-F]{${2 * bytes}}$` });
const Status = Type.Union(TCB_STATUSES.map((s) => Type.Literal(s)));
const Svns = Type.Array(Type.Object({ svn: Type.Integer({ minimum: 0, maximum: 255 }) }), {
  minItems: 16,
  maxItems: 16,
});
const ModuleLevel = Type.Object({
  tcb: Type.Object({ isvsvn: Type.Integer({ minimum: 0 }) }),
  tcbStatus: Status,
  advisoryIDs: Type.Optional(Type.Array(Type.String())),
});
const ModuleIdentity = Type.Object({
  mrsigner: Hex(48),
  attributes: Hex(8),
  attributesMask: Hex(8),
});
export const TdxTcbInfoSchema = Type.Object({
  id: Type.Literal("TDX"),
  version: Type.Literal(3),
  issueDate: Type.String(),
  nextUpdate: Type.String(),
  fmspc: Hex(6),
  pceId: Hex(2),
  tdxModule: ModuleIdentity,
  tdxModuleIdentities: Type.Optional(
    Type.Array(
      Type.Composite([
        ModuleIdentity,
        Type.Object({ id: Type.String(), tcbLevels: Type.Array(ModuleLevel) }),
      ]),
    ),
  ),
  tcbLevels: Type.Array(
    Type.Object({
      tcb: Type.Object({
        sgxtcbcomponents: Svns,
        pcesvn: Type.Integer({ minimum: 0 }),
        tdxtcbcomponents: Svns,
      }),
      tcbStatus: Status,
      advisoryIDs: Type.Optional(Type.Array(Type.String())),
    }),
    { minItems: 1 },
  ),
});
export type TdxTcbInfo = Static<typeof TdxTcbInfoSchema>;

export function parseTdxTcbInfo(raw: string): TdxTcbInfo {
  const value: unknown = JSON.parse(raw);
  if (!Value.Check(TdxTcbInfoSchema, value)) {
    throw chainError("tcb_info_malformed", "the TCB info is not a TDX TCB info v3");
  }
  return value;
}

/** The TCB status of this platform (PCK extensions) running this TDX module (TD report). */
export function matchTdxTcb(info: TdxTcbInfo, pck: PckExtensions, td: TdQuoteBody): TcbVerdict {
  if (info.fmspc.toLowerCase() !== pck.fmspc.toString("hex")) {
    throw chainError(
      "tcb_info_fmspc_mismatch",
      `the TCB info is for FMSPC ${info.fmspc}, the PCK certificate is ${pck.fmspc.toString("hex")}`,
    );
  }
  if (info.pceId.toLowerCase() !== pck.pceId.toString("hex")) {
    throw chainError("tcb_info_pce_id_mismatch", "the TCB info is for another PCE id");
  }
  const moduleVerdict = matchTdxModule(info, td);
  // With a TDX module version above 0, the first two TEE TCB SVN bytes (module SVN and
  // version) are judged by the module identity above, not by the platform levels.
  const firstTdx = td.teeTcbSvn[1]! > 0 ? 2 : 0;
  const level = info.tcbLevels.find(
    ({ tcb }) =>
      pck.pceSvn >= tcb.pcesvn &&
      tcb.sgxtcbcomponents.every((c, i) => pck.sgxComponents[i]! >= c.svn) &&
      tcb.tdxtcbcomponents.every((c, i) => i < firstTdx || td.teeTcbSvn[i]! >= c.svn),
  );
  if (!level) {
    throw chainError(
      "tcb_level_not_found",
      "the platform's TCB is below every level of the TCB info (unsupported platform TCB)",
    );
  }
  const platform = { status: level.tcbStatus, advisoryIds: level.advisoryIDs ?? [] };
  return moduleVerdict ? mergeTcb(platform, moduleVerdict) : platform;
}

/** Checks the SEAM signer and attributes; the module's own TCB verdict when it has one. */
function matchTdxModule(info: TdxTcbInfo, td: TdQuoteBody): TcbVerdict | null {
  const [moduleSvn, moduleVersion] = [td.teeTcbSvn[0]!, td.teeTcbSvn[1]!];
  let identity: Static<typeof ModuleIdentity> = info.tdxModule;
  let levels: Static<typeof ModuleLevel>[] | null = null;
  if (moduleVersion > 0 && info.tdxModuleIdentities) {
    const id = `TDX_${moduleVersion.toString(16).padStart(2, "0").toUpperCase()}`;
    const found = info.tdxModuleIdentities.find((m) => m.id.toUpperCase() === id);
    if (!found) {
      throw chainError("tdx_module_unknown", `the TCB info has no TDX module identity ${id}`);
    }
    identity = found;
    levels = found.tcbLevels;
  }
  const mask = Buffer.from(identity.attributesMask, "hex");
  const expected = Buffer.from(identity.attributes, "hex");
  const attributesMatch = mask.every((m, i) => (td.seamAttributes[i]! & m) === (expected[i]! & m));
  if (td.mrSignerSeam.toString("hex") !== identity.mrsigner.toLowerCase() || !attributesMatch) {
    throw chainError(
      "tdx_module_mismatch",
      "the TD's MRSIGNER_SEAM or SEAM attributes are not the TCB info's TDX module",
    );
  }
  if (!levels) return null;
  const level = levels.find((l) => moduleSvn >= l.tcb.isvsvn);
  if (!level) {
    throw chainError(
      "tdx_module_level_not_found",
      `TDX module SVN ${moduleSvn} is below every level`,
    );
  }
  return { status: level.tcbStatus, advisoryIds: level.advisoryIDs ?? [] };
}
