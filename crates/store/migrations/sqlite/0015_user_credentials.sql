-- Hearth schema 15: a team server user's own credentials. A user's model providers
-- (`user_providers`), and the variables they run an external agent with
-- (`user_agents`: their own sign-in for Claude Code, Codex and the others). Each is
-- theirs alone: keys and variables are kept sealed by the server (opaque to the store)
-- and never used for anyone else. Removing a user removes them. Times are milliseconds
-- since the Unix epoch.

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

CREATE TABLE user_agents (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    agent TEXT NOT NULL,
    sealed_env TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, agent)
);
