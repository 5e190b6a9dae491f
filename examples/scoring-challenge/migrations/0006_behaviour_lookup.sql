-- The behavioural copy check (src/pipeline/behaviour-stage.ts) reads, for each completed run, the
-- behaviour signatures of the earlier completed runs scored on the same bytes (the report's
-- stream_sha256). This index answers that from the completed runs of one stream, in id order.
create index submissions_completed_stream on submissions ((report ->> 'stream_sha256'), id)
  where status = 'completed';
