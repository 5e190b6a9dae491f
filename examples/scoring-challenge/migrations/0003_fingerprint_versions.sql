-- Near-duplicate fingerprints are recomputed from the stored ZIP when their version is older than
-- the code's (fingerprint-store.ts, upgradeFingerprints). Every duplicate check first asks for
-- such rows (`version < current`): this index answers that from a range scan, which is empty once
-- the rows are upgraded, instead of reading the whole table per submission. No data changes: a
-- version 1 row (shingles of all the code) stays until that check recomputes it as version 2
-- (shingles of the code that can run).
create index bundle_fingerprints_version on bundle_fingerprints (version, submission_id);
