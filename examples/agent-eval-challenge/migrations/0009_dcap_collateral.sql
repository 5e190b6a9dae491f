-- Intel DCAP collateral fetched from a PCCS (src/attestation/dcap/collateral-cache.ts): one row
-- per platform family (FMSPC) and PCK CA, kept verbatim as Intel signed it (the verifier checks
-- every signature again on each use, so a row is a cache, never a trust decision). valid_until is
-- the earliest nextUpdate of the four documents: past it the row is no use and the next quote
-- of that platform answers "unavailable" until the PCCS answers again.
create table dcap_collateral (
  fmspc text not null check (fmspc ~ '^[0-9a-f]{12}$'),
  ca text not null check (ca in ('platform', 'processor')),
  tcb_info_body text not null,
  tcb_info_issuer_chain text not null,
  qe_identity_body text not null,
  qe_identity_issuer_chain text not null,
  pck_crl bytea not null,
  pck_crl_issuer_chain text not null,
  root_ca_crl bytea not null,
  fetched_at timestamptz not null,
  valid_until timestamptz not null,
  primary key (fmspc, ca)
);

-- Eviction takes the least recently fetched rows first.
create index dcap_collateral_fetched_at on dcap_collateral (fetched_at);
