-- The sandbox's whole store on PostgreSQL (crates/bridge-sandbox/src/store/postgres.rs). JSON is kept as TEXT,
-- byte for byte as written, so the feed can serve it without decoding (jsonb would reorder members).

-- Clock, counters and the shared signing keys.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- The next feed position: one row, updated in the transaction that appends events (see the store's docs).
CREATE TABLE feed_head (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), position BIGINT NOT NULL);
INSERT INTO feed_head (one, position) VALUES (TRUE, 0);

CREATE TABLE quotes (
    id TEXT PRIMARY KEY, project TEXT NOT NULL, body TEXT NOT NULL, mode TEXT NOT NULL,
    created_ms BIGINT NOT NULL, expires_ms BIGINT NOT NULL, committed BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE TABLE bridges (
    id TEXT PRIMARY KEY, project TEXT NOT NULL, record TEXT NOT NULL, rejections TEXT NOT NULL,
    state TEXT NOT NULL, created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL,
    next_ms BIGINT, webhook_url TEXT, plan TEXT,
    -- Wall-clock lease of the instance whose lifecycle pass took the bridge (cleared when the bridge is saved).
    leased_until BIGINT
);
CREATE INDEX bridges_by_created ON bridges (project, created_ms, id);
CREATE INDEX bridges_by_updated ON bridges (project, updated_ms, id);
CREATE INDEX bridges_due ON bridges (next_ms) WHERE next_ms IS NOT NULL;

CREATE TABLE addresses (
    seq BIGSERIAL PRIMARY KEY, project TEXT NOT NULL,
    deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL, reuse_key TEXT NOT NULL,
    body TEXT NOT NULL, search_item TEXT NOT NULL, webhook_url TEXT, created_ms BIGINT NOT NULL,
    UNIQUE (deposit_chain, deposit_address)
);
CREATE INDEX addresses_reuse ON addresses (project, deposit_chain, reuse_key);

CREATE TABLE routing_addresses (
    seq BIGSERIAL PRIMARY KEY, project TEXT NOT NULL,
    deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL,
    body TEXT NOT NULL, webhook_url TEXT, created_ms BIGINT NOT NULL,
    UNIQUE (deposit_chain, deposit_address)
);

CREATE TABLE deposits (
    seq BIGSERIAL PRIMARY KEY, deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL,
    last_bridge TEXT NOT NULL, bridge_id TEXT
);
CREATE INDEX deposits_by_address ON deposits (deposit_chain, deposit_address, seq);

-- `seq` is the feed position, from feed_head (never from a sequence: those are not commit-ordered).
CREATE TABLE events (
    seq BIGINT PRIMARY KEY, id TEXT NOT NULL UNIQUE, project TEXT NOT NULL,
    created_ms BIGINT NOT NULL, body TEXT NOT NULL, webhook_url TEXT
);
CREATE INDEX events_by_project ON events (project, seq);
CREATE INDEX events_by_time ON events (project, created_ms, seq);

CREATE TABLE outbox (
    id BIGSERIAL PRIMARY KEY, event_id TEXT NOT NULL, project TEXT NOT NULL, url TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, next_ms BIGINT, delivered BOOLEAN NOT NULL DEFAULT FALSE,
    leased_until BIGINT
);
CREATE INDEX outbox_due ON outbox (next_ms) WHERE next_ms IS NOT NULL;

CREATE TABLE delivery_attempts (
    id BIGSERIAL PRIMARY KEY, outbox_id BIGINT NOT NULL, event_id TEXT NOT NULL,
    project TEXT NOT NULL, url TEXT NOT NULL, attempt INTEGER NOT NULL, at_ms BIGINT NOT NULL,
    status INTEGER, error TEXT, delivered BOOLEAN NOT NULL, next_ms BIGINT
);
CREATE INDEX attempts_by_project ON delivery_attempts (project, id);
