// The SGX enclave report (384 bytes) the Quoting Enclave emits about itself: what the QE
// identity is matched against, and whose report_data binds the attestation key. Layout from
// Intel's SGX DCAP quote format (sgx_report_body_t).

export const ENCLAVE_REPORT_BYTES = 384;

export interface EnclaveReport {
  readonly cpuSvn: Buffer;
  /** MISCSELECT as its 4 little-endian bytes. */
  readonly miscSelect: Buffer;
  readonly attributes: Buffer;
  readonly mrEnclave: Buffer;
  readonly mrSigner: Buffer;
  readonly isvProdId: number;
  readonly isvSvn: number;
  readonly reportData: Buffer;
}

export function parseEnclaveReport(bytes: Buffer): EnclaveReport {
  if (bytes.length !== ENCLAVE_REPORT_BYTES) {
    throw new RangeError(`an enclave report is ${ENCLAVE_REPORT_BYTES} bytes, got ${bytes.length}`);
  }
  const at = (start: number, size: number) => Buffer.from(bytes.subarray(start, start + size));
  return {
    cpuSvn: at(0, 16),
    miscSelect: at(16, 4),
    // 20..48 reserved
    attributes: at(48, 16),
    mrEnclave: at(64, 32),
    // 96..128 reserved
    mrSigner: at(128, 32),
    // 160..256 reserved
    isvProdId: bytes.readUInt16LE(256),
    isvSvn: bytes.readUInt16LE(258),
    // 260..320 reserved
    reportData: at(320, 64),
  };
}
