-- Sliding-window rate limits per (bucket, hotkey). `hits` holds the times of the requests that
-- still count (at most `limit` of them); one upsert locks the row, drops expired hits and adds
-- the new one only while fewer than `limit` remain, so replicas sharing the database agree.
create table sdk_rate_limits (
  bucket text not null,
  hotkey text not null,
  hits timestamptz[] not null,
  window_seconds double precision not null,
  updated_at timestamptz not null default now(),
  primary key (bucket, hotkey)
);

create index sdk_rate_limits_updated_at on sdk_rate_limits (updated_at);
