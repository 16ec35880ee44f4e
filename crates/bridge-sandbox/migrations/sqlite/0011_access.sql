-- Projects, API keys, signing keys and the audit list (issue 26: `store::access`).

CREATE TABLE access_head (one INTEGER PRIMARY KEY CHECK (one = 1), version INTEGER NOT NULL);
INSERT INTO access_head (one, version) VALUES (1, 0);
CREATE TABLE project_access (
    project TEXT PRIMARY KEY, created_ms INTEGER NOT NULL, disabled_ms INTEGER, last_activity_ms INTEGER
);
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY, project TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
    created_ms INTEGER NOT NULL, last_used_ms INTEGER, revoked_ms INTEGER
);
CREATE INDEX api_keys_by_project ON api_keys (project, created_ms);
CREATE INDEX api_keys_revoked ON api_keys (revoked_ms) WHERE revoked_ms IS NOT NULL;
CREATE TABLE signing_keys (
    seq INTEGER PRIMARY KEY, kid TEXT NOT NULL UNIQUE, secret TEXT NOT NULL, created_ms INTEGER NOT NULL,
    unlabelled INTEGER NOT NULL, signed_until_ms INTEGER NOT NULL, retires_ms INTEGER
);
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
    project TEXT, subject TEXT, detail TEXT NOT NULL
);
CREATE INDEX audit_by_project ON audit_log (project, seq);
