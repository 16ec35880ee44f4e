-- Webhook deliveries: the outbox (one row for each event that has a webhookUrl) and the log of attempts.

CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, project TEXT NOT NULL, url TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, next_ms INTEGER, delivered INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX outbox_due ON outbox (next_ms) WHERE next_ms IS NOT NULL;
CREATE TABLE delivery_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, outbox_id INTEGER NOT NULL, event_id TEXT NOT NULL,
    project TEXT NOT NULL, url TEXT NOT NULL, attempt INTEGER NOT NULL, at_ms INTEGER NOT NULL,
    status INTEGER, error TEXT, delivered INTEGER NOT NULL, next_ms INTEGER
);
CREATE INDEX attempts_by_project ON delivery_attempts (project, id);
