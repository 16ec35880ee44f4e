-- A clock per project (issue 22; PostgreSQL migration 0005 says what each column is). Projects seen by earlier
-- versions, which had one clock for all, keep that clock.

CREATE TABLE projects (
    id TEXT PRIMARY KEY, first_seen_ms INTEGER NOT NULL, clock_value INTEGER NOT NULL,
    clock_floor INTEGER NOT NULL, generation INTEGER NOT NULL DEFAULT 0
);
INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor)
SELECT p.project, json_extract(c.value, '$[1]'), json_extract(c.value, '$[0]'), json_extract(c.value, '$[1]')
FROM (SELECT project FROM quotes UNION SELECT project FROM bridges UNION SELECT project FROM events
      UNION SELECT project FROM addresses UNION SELECT project FROM routing_addresses) AS p
CROSS JOIN (SELECT value FROM meta WHERE key = 'clock') AS c;
CREATE INDEX bridges_due_by_project ON bridges (project, next_ms) WHERE next_ms IS NOT NULL;
CREATE INDEX outbox_due_by_project ON outbox (project, next_ms) WHERE next_ms IS NOT NULL;
CREATE INDEX outbox_by_project ON outbox (project);
