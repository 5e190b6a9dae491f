-- The evidence objects of review reports: the exact bytes the review VM attached to its
-- envelope, sealed at rest (AES-256-GCM under a key derived from SECRET_KEY_FILE, the object
-- ref as associated data), one row per object, never changed. The envelope's core commits to
-- each object's length and sha256, so a validator can check what it downloads.
create table review_evidence (
  session_id text not null,
  -- "<assignment id>.<name>": unique in the session whatever the attempt, readable on its own.
  object_ref text not null check (object_ref ~ '^[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
  assignment_id text not null,
  name text not null check (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
  media_type text not null check (char_length(media_type) between 3 and 129),
  length integer not null check (length between 0 and 262144),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  sealed bytea not null,
  created_at timestamptz not null default now(),
  primary key (session_id, object_ref),
  unique (assignment_id, name),
  check (object_ref = assignment_id || '.' || name),
  foreign key (assignment_id, session_id) references review_assignments (id, session_id)
    on delete cascade
);

create trigger review_evidence_append_only before update on review_evidence
  for each row execute function agent_eval_refuse_update();
