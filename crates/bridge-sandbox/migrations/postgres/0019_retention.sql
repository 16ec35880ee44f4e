-- Retention (issue 36, `serve --retain`): every row the purge may delete keeps when it was last written
-- (`stored_ms`), in milliseconds of wall-clock time on the database server's clock, the one clock every instance
-- shares (the sandbox's and the projects' clocks are simulated time, which a project may move years ahead). Rows
-- written before this migration count as written now: a default that is not volatile is computed once, here, and
-- kept in the catalogue (no table is rewritten), then dropped, so that every write must give the column itself.
ALTER TABLE quotes ADD COLUMN stored_ms BIGINT NOT NULL DEFAULT round(extract(epoch FROM now()) * 1000)::bigint;
ALTER TABLE quotes ALTER COLUMN stored_ms DROP DEFAULT;
ALTER TABLE bridges ADD COLUMN stored_ms BIGINT NOT NULL DEFAULT round(extract(epoch FROM now()) * 1000)::bigint;
ALTER TABLE bridges ALTER COLUMN stored_ms DROP DEFAULT;
ALTER TABLE deposits ADD COLUMN stored_ms BIGINT NOT NULL DEFAULT round(extract(epoch FROM now()) * 1000)::bigint;
ALTER TABLE deposits ALTER COLUMN stored_ms DROP DEFAULT;
ALTER TABLE events ADD COLUMN stored_ms BIGINT NOT NULL DEFAULT round(extract(epoch FROM now()) * 1000)::bigint;
ALTER TABLE events ALTER COLUMN stored_ms DROP DEFAULT;
ALTER TABLE delivery_attempts ADD COLUMN stored_ms BIGINT NOT NULL DEFAULT round(extract(epoch FROM now()) * 1000)::bigint;
ALTER TABLE delivery_attempts ALTER COLUMN stored_ms DROP DEFAULT;
-- Whether a bridge's lifecycle is over (`domain::records::has_ended`: a final state with no step due). Only ended
-- bridges are purged, by the time of their last change. Bridges saved before this migration are marked here.
ALTER TABLE bridges ADD COLUMN ended BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE bridges SET ended = TRUE WHERE next_ms IS NULL
    AND state IN ('EXECUTED', 'CANCELLED', 'FAILED', 'SWAP_FAILED_REFUNDED', 'DEPOSIT_RECEIVED_AFTER_GRACE_PERIOD_REFUNDED');
-- What the purge reads, oldest first: quotes, ended bridges and deposits without a bridge by their time (events
-- and delivery attempts by their positions, in the primary keys); a purged bridge's deposits; an event's
-- deliveries (pending ones keep their event).
CREATE INDEX quotes_by_stored ON quotes (stored_ms);
CREATE INDEX bridges_ended ON bridges (stored_ms) WHERE ended;
CREATE INDEX deposits_unbridged ON deposits (stored_ms) WHERE bridge_id IS NULL;
CREATE INDEX deposits_by_bridge ON deposits (bridge_id) WHERE bridge_id IS NOT NULL;
CREATE INDEX outbox_by_event ON outbox (event_id);
