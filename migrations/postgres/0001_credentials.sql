-- Issued credentials and the issuer's public keys (PostgreSQL). The SQLite twin is
-- migrations/sqlite/0001_credentials.sql: same tables, columns and meaning.
CREATE TABLE credentials (
    -- Names the credential (with the nonce) in its short ID, and gives its status-list position.
    -- Taken from blocks of issuer_counters, so it is known before signing; unique across instances.
    serial BIGINT PRIMARY KEY,
    -- Random bits of the short ID, so IDs cannot be enumerated.
    nonce BIGINT NOT NULL,
    issued_at TEXT NOT NULL,
    name TEXT NOT NULL,
    language TEXT NOT NULL,
    bank_version BIGINT NOT NULL,
    score_percent BIGINT NOT NULL,
    -- The first answers the server graded, as JSON, so a result can be re-checked later.
    answers TEXT NOT NULL,
    key_id TEXT NOT NULL,
    -- The signed credential, stored in the same transaction as the row.
    credential TEXT NOT NULL,
    revoked_at TEXT,
    revocation_reason TEXT
);

CREATE INDEX credentials_revoked ON credentials (serial) WHERE revoked_at IS NOT NULL;

CREATE TABLE issuer_keys (
    key_id TEXT PRIMARY KEY,
    public_key_multibase TEXT NOT NULL,
    registered_at TEXT NOT NULL
);

-- Serials are handed out in blocks (one update per block, not per credential); every instance
-- takes its own blocks, so serials stay unique when several share one database.
CREATE TABLE issuer_counters (
    name TEXT PRIMARY KEY,
    next_value BIGINT NOT NULL
);

INSERT INTO issuer_counters (name, next_value) VALUES ('serial', 1);
