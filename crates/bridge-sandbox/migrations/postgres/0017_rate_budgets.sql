-- Each project's request budget, shared by every instance of the database (issue 36, `serve --rate-limit`): a
-- token bucket (millionths of a token at `updated_ms`, refilled at the project's rate up to its burst) from which
-- each instance leases a few tokens at a time and spends them locally (`crate::infra::rate_limit`). `granted`: the
-- tokens of the last lease. SQLite (one instance per data directory) keeps the budgets in memory: no table.
CREATE TABLE rate_budgets (
    project TEXT PRIMARY KEY,
    micros BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    granted BIGINT NOT NULL
);
