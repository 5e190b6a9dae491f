-- Failures of the platform while it evaluated a bundle (issue 31: a bundle whose text the
-- database refused was retried as an internal error up to 1000 times, each a full container
-- run). Each is now counted and shown, and only a handful are retried.

-- Per level, what GET /v1/health/eval-jobs shows: how many attempts of the level failed on the
-- platform's side, and the last such error (a sentence, at most 2,000 characters).
alter table eval_jobs
  add column failures integer not null default 0 check (failures >= 0),
  add column last_error text check (char_length(last_error) <= 2000);

-- Was harness_failures (the harness breaking its own protocol, three allowed). It now counts every
-- failure of the platform while it evaluated the bundle (the harness, the database, a bug); the
-- fifth fails the bundle with a sentence saying the platform could not evaluate it. Waiting for
-- an executor or a GPU that is not there is not counted: nothing of the bundle ran.
alter table submissions rename column harness_failures to platform_failures;
