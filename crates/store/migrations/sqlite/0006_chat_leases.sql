-- Hearth schema 6: chat leases. A chat has at most one writer at a time across processes:
-- the process answering in a chat holds its lease until the turn is stored.
-- `owner` is the holding host instance (random, minted when the process starts); `pid` and
-- `host` say where it runs. `epoch` grows each time the lease passes to another owner. A
-- released lease keeps its row, ended (`expires_at` in the past), so the next owner can
-- tell that the chat changed hands. Times are milliseconds since the Unix epoch (UTC).

CREATE TABLE chat_leases (
    chat_uri TEXT PRIMARY KEY REFERENCES chats (uri) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    taken_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
