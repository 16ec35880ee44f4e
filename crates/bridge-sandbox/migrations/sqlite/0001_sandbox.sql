-- The sandbox's whole store in one SQLite file (crates/bridge-sandbox/src/store/sqlite/). JSON is kept as TEXT,
-- byte for byte as written.

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE quotes (
    id TEXT PRIMARY KEY, project TEXT NOT NULL, body TEXT NOT NULL, mode TEXT NOT NULL,
    created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL, committed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE bridges (
    id TEXT PRIMARY KEY, project TEXT NOT NULL, record TEXT NOT NULL, rejections TEXT NOT NULL,
    state TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL,
    next_ms INTEGER, webhook_url TEXT
);
CREATE INDEX bridges_by_created ON bridges (project, created_ms, id);
CREATE INDEX bridges_by_updated ON bridges (project, updated_ms, id);
CREATE INDEX bridges_due ON bridges (next_ms) WHERE next_ms IS NOT NULL;
CREATE TABLE addresses (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL,
    deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL, reuse_key TEXT NOT NULL,
    body TEXT NOT NULL, search_item TEXT NOT NULL, webhook_url TEXT, created_ms INTEGER NOT NULL,
    UNIQUE (deposit_chain, deposit_address)
);
CREATE INDEX addresses_reuse ON addresses (project, deposit_chain, reuse_key);
CREATE TABLE deposits (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL,
    last_bridge TEXT NOT NULL, bridge_id TEXT
);
CREATE INDEX deposits_by_address ON deposits (deposit_chain, deposit_address, seq);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, project TEXT NOT NULL,
    created_ms INTEGER NOT NULL, body TEXT NOT NULL, webhook_url TEXT
);
CREATE INDEX events_by_project ON events (project, seq);
CREATE INDEX events_by_time ON events (project, created_ms, seq);
