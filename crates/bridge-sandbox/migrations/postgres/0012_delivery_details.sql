-- What each webhook delivery attempt took (real milliseconds from sending to the answer or the failure) and the
-- start of the receiver's answer body (issue 27: the dashboard's delivery log). NULL for attempts recorded before.
ALTER TABLE delivery_attempts ADD COLUMN latency_ms BIGINT;
ALTER TABLE delivery_attempts ADD COLUMN body_start TEXT;
-- A recovery looks up each delivery's latest attempt.
CREATE INDEX attempts_by_outbox ON delivery_attempts (outbox_id, at_ms);
