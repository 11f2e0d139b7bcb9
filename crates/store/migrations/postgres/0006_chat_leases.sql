-- Hearth schema 6 (PostgreSQL): chat leases, one writer per chat across processes and
-- nodes. Times come from the database's clock, so nodes need not agree on theirs.
CREATE TABLE chat_leases (
    chat_uri TEXT PRIMARY KEY REFERENCES chats (uri) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    pid BIGINT NOT NULL,
    host TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    taken_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
