-- Production endpoints beyond the spec (issue 17): bridges by deposit and withdrawal hash, and deposit addresses
-- created by a project in a window (the creation rate limit).

CREATE INDEX bridges_deposit_hash ON bridges (json_extract(record, '$.depositTxHash'));
CREATE INDEX bridges_withdraw_hash ON bridges (json_extract(record, '$.withdrawTxHash'));
CREATE INDEX addresses_project_created ON addresses (project, created_ms);
