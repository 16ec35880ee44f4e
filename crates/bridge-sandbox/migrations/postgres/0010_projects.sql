-- A clock per project (issue 22): each project's simulated time, from its first sight. `clock_value` is the
-- project's time under `--clock manual` and its offset from the wall clock under `--clock real`; `clock_floor` the
-- latest time any instance answered for it (stored by the lifecycle pass); `generation` counts resets.
CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    first_seen_ms BIGINT NOT NULL,
    clock_value BIGINT NOT NULL,
    clock_floor BIGINT NOT NULL,
    generation BIGINT NOT NULL DEFAULT 0
);
-- Projects seen by earlier versions, which had one clock for all: each keeps that clock.
INSERT INTO projects (id, first_seen_ms, clock_value, clock_floor)
SELECT p.project, c.floor, c.value, c.floor
FROM (SELECT project FROM quotes UNION SELECT project FROM bridges UNION SELECT project FROM events
      UNION SELECT project FROM addresses UNION SELECT project FROM routing_addresses) AS p
CROSS JOIN (SELECT (value::jsonb ->> 0)::bigint AS value, (value::jsonb ->> 1)::bigint AS floor
            FROM meta WHERE key = 'clock') AS c;
-- What is due is found per project (its clock): the lifecycle pass and the deliverer probe these per project.
CREATE INDEX bridges_due_by_project ON bridges (project, next_ms) WHERE next_ms IS NOT NULL;
CREATE INDEX outbox_due_by_project ON outbox (project, next_ms) WHERE next_ms IS NOT NULL;
-- A reset deletes a project's deposits (kept by address) and delivery log.
CREATE INDEX outbox_by_project ON outbox (project);
