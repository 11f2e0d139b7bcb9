-- Hearth schema 15: a team server user's own model providers. Each is theirs alone: its
-- key is kept sealed by the server (`sealed_key`, opaque to the store; NULL for a
-- provider that needs none), and is never used for anyone else. Removing a user removes
-- their providers. Times are milliseconds since the Unix epoch.

CREATE TABLE user_providers (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic')),
    base_url TEXT,
    model TEXT,
    sealed_key TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, name)
);
