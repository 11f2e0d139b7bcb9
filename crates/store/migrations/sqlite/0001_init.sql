-- Hearth schema 1: session registry, chat catalog, turns, drafts, chat backings.
-- Times are milliseconds since the Unix epoch (UTC).

CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    uri TEXT NOT NULL UNIQUE,
    provider TEXT NOT NULL,
    title TEXT,
    provenance TEXT NOT NULL CHECK (provenance IN ('hearth', 'external')),
    source TEXT NOT NULL,
    project_id TEXT,
    model TEXT,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    -- Tombstone: a deleted session keeps its row so discovery never resurrects it.
    deleted_at INTEGER
);

CREATE INDEX sessions_recent ON sessions (updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX sessions_by_project ON sessions (project_id, updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX sessions_by_provider ON sessions (provider, updated_at DESC, id DESC) WHERE deleted_at IS NULL;

-- The chat catalog: every chat of a session, the default chat at position 0.
CREATE TABLE chats (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    uri TEXT NOT NULL UNIQUE,
    position INTEGER NOT NULL,
    origin TEXT NOT NULL,
    title TEXT,
    model TEXT,
    -- The harness's opaque backing blob, stored verbatim.
    provider_data BLOB,
    backing TEXT,
    draft TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE INDEX chats_by_session ON chats (session_id, position);

-- Turns; `parts` is the ordered response as a JSON array. `stop_reason` is NULL while the
-- turn runs (or when the process writing it stopped: then it reads as incomplete).
CREATE TABLE turns (
    chat_id INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    turn_id TEXT NOT NULL,
    user_message TEXT NOT NULL,
    parts TEXT NOT NULL,
    usage TEXT,
    stop_reason TEXT,
    started_at INTEGER NOT NULL,
    completed_at INTEGER,
    checkpointed_at INTEGER NOT NULL,
    PRIMARY KEY (chat_id, seq)
) WITHOUT ROWID;

CREATE UNIQUE INDEX turns_by_id ON turns (chat_id, turn_id);

-- Provider-native conversations that back a chat; never listed as sessions.
CREATE TABLE chat_backings (
    provider TEXT NOT NULL,
    backing TEXT NOT NULL,
    chat_uri TEXT NOT NULL,
    PRIMARY KEY (provider, backing)
) WITHOUT ROWID;
