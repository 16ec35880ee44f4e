-- Which instance holds a lease (a delivery in flight, a bridge taken by a lifecycle pass): an instance that shuts
-- down hands back its own leases at once (`Store::release_own_leases`), so another instance takes them without
-- waiting for the lease to run out. NULL: nobody's, or taken before this migration.
ALTER TABLE outbox ADD COLUMN leased_by TEXT;
ALTER TABLE bridges ADD COLUMN leased_by TEXT;
