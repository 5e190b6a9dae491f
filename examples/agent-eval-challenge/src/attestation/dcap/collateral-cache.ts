// The CollateralSource the service uses: a PCCS behind a cache in the challenge's database.
// A row younger than `refreshSeconds` is used as is; an older one is refreshed from the PCCS;
// when the PCCS is down (timeout, error, garbage), a row still within its validity carries on,
// and without one the answer is null (the verifier says "unavailable": 503, nonce kept). The
// cache is bounded: past `maxRows` platforms the least recently fetched rows go.

import type { Sql } from "@platform/challenge-sdk";
import type { DcapCollateral } from "./collateral.js";
import { parseCrl } from "./crl.js";
import type { CollateralRequest, CollateralSource } from "./intel-collateral-verifier.js";
import { splitSignedJson } from "./signed-json.js";

export interface CachedPccsOptions {
  readonly sql: Sql;
  /** Fetches one platform's collateral; throws when it cannot. */
  readonly fetch: (request: CollateralRequest) => Promise<DcapCollateral>;
  readonly refreshSeconds: number;
  readonly maxRows: number;
  readonly now?: () => Date;
  /** Told why a refresh failed (never with collateral bytes). */
  readonly onFetchError?: (request: CollateralRequest, error: unknown) => void;
}

interface Row {
  tcb_info_body: string;
  tcb_info_issuer_chain: string;
  qe_identity_body: string;
  qe_identity_issuer_chain: string;
  pck_crl: Buffer;
  pck_crl_issuer_chain: string;
  root_ca_crl: Buffer;
  fetched_at: Date;
  valid_until: Date;
}

export function cachedPccsSource(options: CachedPccsOptions): CollateralSource {
  const now = options.now ?? (() => new Date());
  // One lookup per platform at a time: a burst of quotes from a new platform shares one read,
  // one PCCS round and one write.
  const inFlight = new Map<string, Promise<DcapCollateral | null>>();
  return {
    collateralFor(request) {
      const key = `${request.fmspc}:${request.ca}`;
      let pending = inFlight.get(key);
      if (!pending) {
        pending = lookup(options, request, now()).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
  };
}

async function lookup(
  options: CachedPccsOptions,
  request: CollateralRequest,
  at: Date,
): Promise<DcapCollateral | null> {
  const [row] = await options.sql<Row[]>`
      select * from dcap_collateral where fmspc = ${request.fmspc} and ca = ${request.ca}`;
  const usable = row && at <= row.valid_until ? fromRow(row) : null;
  if (usable && at.getTime() - row!.fetched_at.getTime() < options.refreshSeconds * 1000) {
    return usable;
  }
  let fresh: DcapCollateral;
  let validUntil: Date;
  try {
    fresh = await options.fetch(request);
    validUntil = earliestNextUpdate(fresh);
  } catch (error) {
    options.onFetchError?.(request, error);
    return usable;
  }
  await store(options, request, fresh, at, validUntil);
  return at <= validUntil ? fresh : usable;
}

const fromRow = (row: Row): DcapCollateral => ({
  tcbInfoBody: row.tcb_info_body,
  tcbInfoIssuerChain: row.tcb_info_issuer_chain,
  qeIdentityBody: row.qe_identity_body,
  qeIdentityIssuerChain: row.qe_identity_issuer_chain,
  pckCrl: Buffer.from(row.pck_crl),
  pckCrlIssuerChain: row.pck_crl_issuer_chain,
  rootCaCrl: Buffer.from(row.root_ca_crl),
});

/**
 * When this collateral stops being usable: the earliest nextUpdate of the TCB info, the QE
 * identity and both CRLs. Throws when any of them does not parse (such an answer is not kept).
 */
export function earliestNextUpdate(collateral: DcapCollateral): Date {
  const tcb = JSON.parse(splitSignedJson(collateral.tcbInfoBody, "tcbInfo", "tcb_info").raw);
  const qe = JSON.parse(
    splitSignedJson(collateral.qeIdentityBody, "enclaveIdentity", "qe_identity").raw,
  );
  const dates = [
    new Date(tcb.nextUpdate),
    new Date(qe.nextUpdate),
    parseCrl(collateral.pckCrl, "pck_crl").nextUpdate,
    parseCrl(collateral.rootCaCrl, "root_ca_crl").nextUpdate,
  ];
  if (dates.some((d) => Number.isNaN(d.getTime()))) throw new Error("unparseable nextUpdate");
  return new Date(Math.min(...dates.map((d) => d.getTime())));
}

/** Upsert the row and evict past the bound, in one transaction. */
async function store(
  options: CachedPccsOptions,
  request: CollateralRequest,
  c: DcapCollateral,
  fetchedAt: Date,
  validUntil: Date,
): Promise<void> {
  await options.sql.begin(async (tx) => {
    await tx`
      insert into dcap_collateral (fmspc, ca, tcb_info_body, tcb_info_issuer_chain,
        qe_identity_body, qe_identity_issuer_chain, pck_crl, pck_crl_issuer_chain, root_ca_crl,
        fetched_at, valid_until)
      values (${request.fmspc}, ${request.ca}, ${c.tcbInfoBody}, ${c.tcbInfoIssuerChain},
        ${c.qeIdentityBody}, ${c.qeIdentityIssuerChain}, ${c.pckCrl}, ${c.pckCrlIssuerChain},
        ${c.rootCaCrl}, ${fetchedAt}, ${validUntil})
      on conflict (fmspc, ca) do update set
        tcb_info_body = excluded.tcb_info_body,
        tcb_info_issuer_chain = excluded.tcb_info_issuer_chain,
        qe_identity_body = excluded.qe_identity_body,
        qe_identity_issuer_chain = excluded.qe_identity_issuer_chain,
        pck_crl = excluded.pck_crl,
        pck_crl_issuer_chain = excluded.pck_crl_issuer_chain,
        root_ca_crl = excluded.root_ca_crl,
        fetched_at = excluded.fetched_at,
        valid_until = excluded.valid_until`;
    await tx`
      delete from dcap_collateral where (fmspc, ca) in (
        select fmspc, ca from dcap_collateral order by fetched_at desc offset ${options.maxRows})`;
  });
}
