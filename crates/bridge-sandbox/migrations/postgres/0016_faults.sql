-- Fault profiles (issue 35): each project's own profile (the contract's SandboxFaultProfile as JSON text), the
-- fault version every instance polls, and where a delivery attempt was faulted on purpose.
CREATE TABLE fault_head (one INTEGER PRIMARY KEY CHECK (one = 1), version BIGINT NOT NULL);
INSERT INTO fault_head (one, version) VALUES (1, 0);
CREATE TABLE fault_profiles (project TEXT PRIMARY KEY, profile TEXT NOT NULL, updated_ms BIGINT NOT NULL);
-- The attempt number a hold-back fault held back (that attempt, when made, is marked holdBack and not drawn again).
ALTER TABLE outbox ADD COLUMN held_back_attempt INTEGER;
-- The fault of an attempt (SandboxDeliveryFault), NULL for an attempt that was not faulted.
ALTER TABLE delivery_attempts ADD COLUMN fault TEXT;
