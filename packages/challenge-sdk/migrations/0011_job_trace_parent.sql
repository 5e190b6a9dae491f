-- The W3C traceparent of the request that enqueued a job (null when tracing was off): the
-- worker that claims it continues that trace, so one submission is one trace from the master's
-- proxy to the job's container run.
alter table sdk_jobs add column trace_parent text;
