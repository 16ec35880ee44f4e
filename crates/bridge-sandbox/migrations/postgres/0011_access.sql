-- Projects, API keys, signing keys and the audit list (issue 26; crates/bridge-sandbox/src/store/access.rs).
-- Times are wall-clock milliseconds. API keys are kept as the SHA-256 of their text, never the text.

-- The access version: grows with every change instances must see at once (a revocation, a project disabled or
-- enabled, a signing key made or replaced); instances poll it and reload what they keep in memory when it moved.
CREATE TABLE access_head (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), version BIGINT NOT NULL);
INSERT INTO access_head (one, version) VALUES (TRUE, 0);

-- Access control of a project (enabled or disabled, last activity). Not `projects`, which keeps per-project
-- sandbox state.
CREATE TABLE project_access (
    project TEXT PRIMARY KEY, created_ms BIGINT NOT NULL, disabled_ms BIGINT, last_activity_ms BIGINT
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY, project TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
    created_ms BIGINT NOT NULL, last_used_ms BIGINT, revoked_ms BIGINT
);
CREATE INDEX api_keys_by_project ON api_keys (project, created_ms);
CREATE INDEX api_keys_revoked ON api_keys (revoked_ms) WHERE revoked_ms IS NOT NULL;

-- JWT signing keys (HS256), `kid` k1, k2, ... in `seq` order; the newest is the current one.
CREATE TABLE signing_keys (
    seq BIGINT PRIMARY KEY, kid TEXT NOT NULL UNIQUE, secret TEXT NOT NULL, created_ms BIGINT NOT NULL,
    unlabelled BOOLEAN NOT NULL, signed_until_ms BIGINT NOT NULL, retires_ms BIGINT
);

CREATE TABLE audit_log (
    seq BIGSERIAL PRIMARY KEY, at_ms BIGINT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
    project TEXT, subject TEXT, detail TEXT NOT NULL
);
CREATE INDEX audit_by_project ON audit_log (project, seq);
