-- Hearth schema 14 (PostgreSQL): users, their API tokens' digests, teams and grants; the
-- owner and team of sessions and projects (see the SQLite migration of this number).
ALTER TABLE sessions ADD COLUMN owner TEXT;
ALTER TABLE sessions ADD COLUMN team TEXT;
ALTER TABLE projects ADD COLUMN owner TEXT;
ALTER TABLE projects ADD COLUMN team TEXT;

CREATE INDEX sessions_by_owner ON sessions (owner, updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX sessions_by_team ON sessions (team, updated_at DESC, id DESC)
    WHERE deleted_at IS NULL AND team IS NOT NULL;

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    issuer TEXT,
    subject TEXT,
    created_at BIGINT NOT NULL,
    UNIQUE (issuer, subject)
);

CREATE UNIQUE INDEX users_by_folded_name ON users (lower(name));

CREATE TABLE user_tokens (
    digest TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX user_tokens_by_user ON user_tokens (user_id);

CREATE TABLE team_members (
    team TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('member', 'approver')),
    PRIMARY KEY (team, user_id)
);

CREATE INDEX team_members_by_user ON team_members (user_id, team);

CREATE TABLE grants (
    resource TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('member', 'approver')),
    PRIMARY KEY (resource, user_id, role)
);

CREATE INDEX grants_by_user ON grants (user_id);
