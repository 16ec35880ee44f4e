-- Production endpoints beyond the spec (issue 17): bridges by deposit and by withdrawal hash, and the deposit
-- addresses a project created in a window (the creation rate limit's status).
CREATE INDEX bridges_deposit_hash ON bridges (project, ((record::jsonb) ->> 'depositTxHash'));
CREATE INDEX bridges_withdraw_hash ON bridges (project, ((record::jsonb) ->> 'withdrawTxHash'));
CREATE INDEX addresses_project_created ON addresses (project, created_ms);
