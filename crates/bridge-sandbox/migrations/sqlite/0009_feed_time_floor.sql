-- The feed's time watermark (`latest_ms`: the latest `created_ms` at or before each position, never decreasing
-- along the feed), so that the first page at a `sinceTimestamp` starts with an index seek.

ALTER TABLE events ADD COLUMN latest_ms INTEGER;
UPDATE events SET latest_ms = w.m
    FROM (SELECT seq, MAX(created_ms) OVER (ORDER BY seq) AS m FROM events) AS w
    WHERE w.seq = events.seq;
CREATE INDEX events_by_latest ON events (project, latest_ms, seq);
