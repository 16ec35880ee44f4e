-- Delivery leases on the wall clock, apart from `next_ms` (when an attempt is due, on the sandbox clock).

ALTER TABLE outbox ADD COLUMN leased_until INTEGER;
