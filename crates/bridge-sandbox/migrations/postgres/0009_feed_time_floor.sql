-- The feed's time watermark (the store's docs, "feed positions"): `latest_ms` of an event is the latest
-- `created_ms` of any event at or before its position, so it never decreases along the feed, and the first
-- position whose watermark reaches `sinceTimestamp` is a lower bound of every event at or after that time: the
-- first page at a `sinceTimestamp` starts there (an index seek) instead of walking every earlier event.
ALTER TABLE events ADD COLUMN latest_ms BIGINT;
UPDATE events SET latest_ms = w.m
    FROM (SELECT seq, MAX(created_ms) OVER (ORDER BY seq) AS m FROM events) AS w
    WHERE w.seq = events.seq;
ALTER TABLE feed_head ADD COLUMN latest_ms BIGINT NOT NULL DEFAULT -9223372036854775808;
UPDATE feed_head SET latest_ms = COALESCE((SELECT MAX(created_ms) FROM events), -9223372036854775808);
CREATE INDEX events_by_latest ON events (project, latest_ms, seq);
