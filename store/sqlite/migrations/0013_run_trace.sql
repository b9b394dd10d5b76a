-- 0013_run_trace: a run's OpenTelemetry trace, fixed when the run is
-- created: its trace id, its root span's id and the span its root span is
-- a child of (a child run's parent's root span). NULL for runs created
-- before it was recorded; they have no trace.
ALTER TABLE runs ADD COLUMN trace_id TEXT;
ALTER TABLE runs ADD COLUMN trace_span_id TEXT;
ALTER TABLE runs ADD COLUMN trace_parent_span_id TEXT;
