-- A deposit-address bridge keeps the `addressNote` of the (routing) deposit address that received its deposit: its
-- events carry it, and the lifecycle no longer reads the address at every step (issue 28; PostgreSQL 0010).
-- Bridges made before this migration take it from their address, which is never changed or deleted but by a
-- project reset, which deletes the project's bridges too.
ALTER TABLE bridges ADD COLUMN address_note TEXT;
UPDATE bridges SET address_note = COALESCE(
    (SELECT json_extract(a.body, '$.addressNote') FROM addresses a
      WHERE a.deposit_chain = json_extract(bridges.record, '$.chainIn')
        AND a.deposit_address = json_extract(bridges.record, '$.depositAddress')),
    (SELECT json_extract(r.body, '$.addressNote') FROM routing_addresses r
      WHERE r.deposit_chain = json_extract(bridges.record, '$.chainIn')
        AND r.deposit_address = json_extract(bridges.record, '$.depositAddress')))
WHERE json_extract(record, '$._tag') = 'depositAddressBridge';
