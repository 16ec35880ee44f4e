-- Bridge versions: a save writes only over the version it read (`Store::save_bridge`).

ALTER TABLE bridges ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
