// A client of Intel's PCS v4 API (or a PCCS, which serves the same paths): the four documents
// a TDX quote's chain needs, fetched with a deadline each. What comes back is returned verbatim
// (bodies as text, issuer chains URL-decoded from their headers, CRLs as DER); nothing here is
// trusted, the verifier checks every signature.

import type { DcapCollateral } from "./collateral.js";
import type { CollateralRequest } from "./intel-collateral-verifier.js";

export interface PccsClientOptions {
  /** e.g. https://api.trustedservices.intel.com or a PCCS's https://pccs.internal:8081 */
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** At most this many bytes per answer (a TCB info is tens of KiB). */
  readonly maxBytes?: number;
  /**
   * Where the root CA CRL comes from when the service has no rootcacrl path (Intel's PCS has
   * none, only PCCSs do): Intel's distribution point unless told.
   */
  readonly rootCaCrlUrl?: string;
}

/** Intel's SGX Root CA CRL distribution point (as the PCK CA certificates name it). */
export const INTEL_ROOT_CA_CRL_URL =
  "https://certificates.trustedservices.intel.com/IntelSGXRootCA.der";

export class PccsError extends Error {
  override readonly name = "PccsError";
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

const DEFAULT_MAX_BYTES = 1024 * 1024;

export async function fetchCollateral(
  options: PccsClientOptions,
  request: CollateralRequest,
): Promise<DcapCollateral> {
  const base = options.baseUrl.replace(/\/+$/, "");
  const fmspc = request.fmspc.toUpperCase();
  const [tcb, qe, pckCrl, rootCaCrl] = await Promise.all([
    get(options, `${base}/tdx/certification/v4/tcb?fmspc=${fmspc}`, "TCB-Info-Issuer-Chain"),
    get(options, `${base}/tdx/certification/v4/qe/identity`, "SGX-Enclave-Identity-Issuer-Chain"),
    get(
      options,
      `${base}/sgx/certification/v4/pckcrl?ca=${request.ca}&encoding=der`,
      "SGX-PCK-CRL-Issuer-Chain",
    ),
    rootCaCrlOf(options, base),
  ]);
  return {
    tcbInfoBody: tcb.body.toString("utf8"),
    tcbInfoIssuerChain: tcb.chain,
    qeIdentityBody: qe.body.toString("utf8"),
    qeIdentityIssuerChain: qe.chain,
    pckCrl: crlBytes(pckCrl.body),
    pckCrlIssuerChain: pckCrl.chain,
    rootCaCrl: crlBytes(rootCaCrl.body),
  };
}

/** The PCCS's root CA CRL, or on a 404 (Intel's PCS) the one at Intel's distribution point. */
async function rootCaCrlOf(options: PccsClientOptions, base: string) {
  try {
    return await get(options, `${base}/sgx/certification/v4/rootcacrl`, null);
  } catch (error) {
    if (!(error instanceof PccsError) || error.status !== 404) throw error;
    return get(options, options.rootCaCrlUrl ?? INTEL_ROOT_CA_CRL_URL, null);
  }
}

async function get(
  options: PccsClientOptions,
  url: string,
  chainHeader: string | null,
): Promise<{ body: Buffer; chain: string }> {
  const path = new URL(url).pathname;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs) });
  } catch (error) {
    const reason = error instanceof Error && error.name === "TimeoutError" ? "timed out" : "failed";
    throw new PccsError(`PCCS ${path} ${reason}`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new PccsError(`PCCS ${path} answered ${response.status}`, response.status);
  }
  const body = await readCapped(response, options.maxBytes ?? DEFAULT_MAX_BYTES, path);
  if (chainHeader === null) return { body, chain: "" };
  const header = response.headers.get(chainHeader);
  if (!header) throw new PccsError(`PCCS ${path} sent no ${chainHeader} header`);
  try {
    return { body, chain: decodeURIComponent(header) };
  } catch {
    throw new PccsError(`PCCS ${path} sent a malformed ${chainHeader} header`);
  }
}

async function readCapped(response: Response, maxBytes: number, path: string): Promise<Buffer> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new PccsError(`PCCS ${path} answer is over ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw new PccsError(`PCCS ${path} answer is over ${maxBytes} bytes`);
    }
    chunks.push(Buffer.from(value));
  }
}

/** CRLs come as DER, as PEM, or (PCCS's root CA CRL) as hex text: DER in every case here. */
export function crlBytes(body: Buffer): Buffer {
  const text = body.toString("latin1").trim();
  const pem = /^-----BEGIN X509 CRL-----([A-Za-z0-9+/=\s]+)-----END X509 CRL-----$/.exec(text);
  if (pem) return Buffer.from(pem[1]!.replace(/\s/g, ""), "base64");
  if (/^([0-9a-fA-F]{2})+$/.test(text)) return Buffer.from(text, "hex");
  return body;
}
