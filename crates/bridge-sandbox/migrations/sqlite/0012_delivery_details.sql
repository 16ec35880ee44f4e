-- What each delivery attempt took and the start of its answer (issue 27; PostgreSQL migration 0009).
ALTER TABLE delivery_attempts ADD COLUMN latency_ms INTEGER;
ALTER TABLE delivery_attempts ADD COLUMN body_start TEXT;
CREATE INDEX attempts_by_outbox ON delivery_attempts (outbox_id, at_ms);
