-- Dashboard sessions, shared by every instance of a database (issue 36): a session signed in on one instance is
-- served by any other, and ends on all at once. Nothing here is usable alone: the row is keyed by the SHA-256 of
-- the session id (the browser's cookie holds the id), and the credential that signed in is sealed under a key
-- derived from the session id (`crate::dashboard::session`). The CSRF token is derived from the session id too,
-- and not kept.
CREATE TABLE dashboard_sessions (
    id_hash TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    credential TEXT NOT NULL,
    started_ms BIGINT NOT NULL,
    used_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    notice TEXT
);
CREATE INDEX dashboard_sessions_by_project ON dashboard_sessions (project, used_ms);
CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_ms);
