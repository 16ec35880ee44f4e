-- Each save of a bridge bumps its version, and a save writes only over the version it read: a request and a
-- lifecycle pass (of any instance) that change one bridge at once no longer overwrite each other's change.
ALTER TABLE bridges ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
