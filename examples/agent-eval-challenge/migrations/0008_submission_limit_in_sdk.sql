-- The per-hotkey submission window moved to the SDK: submissions are counted by
-- acceptWithinLimit in the transaction that stores them, in the SDK's sdk_rate_limits (migrated
-- before this challenge's tables), under the bucket 'agent-eval submissions'
-- (src/submissions/submission-store.ts). Windows still open carry over as one counted
-- acceptance each, so upgrading gives no hotkey a free submission.
insert into sdk_rate_limits (bucket, hotkey, hits, window_seconds, updated_at)
select 'agent-eval submissions', hotkey, array[accepted_at],
       extract(epoch from next_allowed_at - accepted_at), accepted_at
from hotkey_submission_windows
where next_allowed_at > now()
on conflict (bucket, hotkey) do nothing;

drop table hotkey_submission_windows;
