-- Retention (issue 36, `serve --retain`; PostgreSQL migration 0019 says what each column is). `stored_ms` is the
-- host's wall-clock time of a row's last write. Rows written before this migration count as written now. The
-- column stays nullable here (SQLite adds no column with a computed default): a row without it is never purged.
ALTER TABLE quotes ADD COLUMN stored_ms INTEGER;
ALTER TABLE bridges ADD COLUMN stored_ms INTEGER;
ALTER TABLE deposits ADD COLUMN stored_ms INTEGER;
ALTER TABLE events ADD COLUMN stored_ms INTEGER;
ALTER TABLE delivery_attempts ADD COLUMN stored_ms INTEGER;
UPDATE quotes SET stored_ms = CAST(round(unixepoch('subsec') * 1000) AS INTEGER);
UPDATE bridges SET stored_ms = CAST(round(unixepoch('subsec') * 1000) AS INTEGER);
UPDATE deposits SET stored_ms = CAST(round(unixepoch('subsec') * 1000) AS INTEGER);
UPDATE events SET stored_ms = CAST(round(unixepoch('subsec') * 1000) AS INTEGER);
UPDATE delivery_attempts SET stored_ms = CAST(round(unixepoch('subsec') * 1000) AS INTEGER);
ALTER TABLE bridges ADD COLUMN ended INTEGER NOT NULL DEFAULT 0;
UPDATE bridges SET ended = 1 WHERE next_ms IS NULL
    AND state IN ('EXECUTED', 'CANCELLED', 'FAILED', 'SWAP_FAILED_REFUNDED', 'DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD_REFUNDED');
CREATE INDEX quotes_by_stored ON quotes (stored_ms);
CREATE INDEX bridges_ended ON bridges (stored_ms) WHERE ended;
CREATE INDEX deposits_unbridged ON deposits (stored_ms) WHERE bridge_id IS NULL;
CREATE INDEX deposits_by_bridge ON deposits (bridge_id) WHERE bridge_id IS NOT NULL;
CREATE INDEX outbox_by_event ON outbox (event_id);
