-- Routing deposit addresses; their deposits go to `deposits` like those of deposit addresses.

CREATE TABLE routing_addresses (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL,
    deposit_chain TEXT NOT NULL, deposit_address TEXT NOT NULL,
    body TEXT NOT NULL, webhook_url TEXT, created_ms INTEGER NOT NULL,
    UNIQUE (deposit_chain, deposit_address)
);
