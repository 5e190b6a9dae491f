// The SGX extension Intel puts in every PCK certificate (OID 1.2.840.113741.1.13.1): the
// platform's FMSPC, PCE id, and the TCB the key was certified at (16 SGX component SVNs, the PCE
// SVN, the CPU SVN). These, not anything the quote claims, are what the TCB info is matched on.

import type { X509Certificate } from "node:crypto";
import { chainError } from "./dcap-error.js";
import {
  children,
  DER_TAG,
  type DerNode,
  expectTag,
  oidString,
  parseDer,
  smallInteger,
} from "./der.js";

const SGX_EXTENSION = "1.2.840.113741.1.13.1";
const TCB = `${SGX_EXTENSION}.2`;
const PCE_ID = `${SGX_EXTENSION}.3`;
const FMSPC = `${SGX_EXTENSION}.4`;
const SGX_COMPONENTS = 16;

export interface PckExtensions {
  readonly fmspc: Buffer;
  readonly pceId: Buffer;
  /** SGX TCB component SVNs 1..16, in order. */
  readonly sgxComponents: readonly number[];
  readonly pceSvn: number;
  readonly cpuSvn: Buffer;
}

export function pckExtensions(cert: X509Certificate): PckExtensions {
  try {
    const entries = sgxExtensionEntries(cert.raw);
    const fmspc = octets(entries.get(FMSPC), 6);
    const pceId = octets(entries.get(PCE_ID), 2);
    const tcb = new Map<string, DerNode>();
    for (const entry of children(expectTag(entries.get(TCB), DER_TAG.sequence, "TCB"))) {
      const [oid, value] = children(entry);
      tcb.set(oidString(oid!), value!);
    }
    const sgxComponents = Array.from({ length: SGX_COMPONENTS }, (_, i) => {
      const svn = smallInteger(tcb.get(`${TCB}.${i + 1}`)!);
      if (svn > 255) throw new Error("component SVN over a byte");
      return svn;
    });
    return {
      fmspc,
      pceId,
      sgxComponents,
      pceSvn: smallInteger(tcb.get(`${TCB}.17`)!),
      cpuSvn: octets(tcb.get(`${TCB}.18`), 16),
    };
  } catch {
    throw chainError(
      "pck_extension_malformed",
      "the PCK certificate's SGX extension is missing or malformed",
    );
  }
}

/** The SGX extension's entries by OID, from the certificate's DER. */
function sgxExtensionEntries(certificate: Buffer): Map<string, DerNode> {
  const tbs = children(parseDer(certificate))[0]!;
  const extensionsWrapper = children(tbs).find((node) => node.tag === 0xa3);
  const extensions = children(children(extensionsWrapper!)[0]!);
  for (const extension of extensions) {
    const fields = children(extension);
    if (oidString(fields[0]!) !== SGX_EXTENSION) continue;
    const value = expectTag(fields[fields.length - 1], DER_TAG.octetString, "extension value");
    const entries = new Map<string, DerNode>();
    for (const entry of children(parseDer(value.value))) {
      const [oid, inner] = children(entry);
      entries.set(oidString(oid!), inner!);
    }
    return entries;
  }
  throw new Error("no SGX extension");
}

function octets(node: DerNode | undefined, size: number): Buffer {
  const value = expectTag(node, DER_TAG.octetString, "octet string").value;
  if (value.length !== size) throw new Error(`expected ${size} bytes`);
  return Buffer.from(value);
}
