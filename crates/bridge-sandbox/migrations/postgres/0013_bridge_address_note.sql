-- A deposit-address bridge keeps the `addressNote` of the (routing) deposit address that received its deposit: its
-- events carry it, and the lifecycle no longer reads the address at every step (issue 28; SQLite 0013).
-- Bridges made before this migration take it from their address, which is never changed or deleted but by a
-- project reset, which deletes the project's bridges too. JSON is kept as TEXT: read here as jsonb.
ALTER TABLE bridges ADD COLUMN address_note TEXT;
UPDATE bridges SET address_note = COALESCE(
    (SELECT a.body::jsonb ->> 'addressNote' FROM addresses a
      WHERE a.deposit_chain = bridges.record::jsonb ->> 'chainIn'
        AND a.deposit_address = bridges.record::jsonb ->> 'depositAddress'),
    (SELECT r.body::jsonb ->> 'addressNote' FROM routing_addresses r
      WHERE r.deposit_chain = bridges.record::jsonb ->> 'chainIn'
        AND r.deposit_address = bridges.record::jsonb ->> 'depositAddress'))
WHERE bridges.record::jsonb ->> '_tag' = 'depositAddressBridge';
