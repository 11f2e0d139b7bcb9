-- Hearth schema 15 (PostgreSQL): a team server user's own model providers and external
-- agents' variables, sealed by the server (see the SQLite migration of this number).

CREATE TABLE user_providers (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic')),
    base_url TEXT,
    model TEXT,
    sealed_key TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, name)
);

CREATE TABLE user_agents (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    agent TEXT NOT NULL,
    sealed_env TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, agent)
);
