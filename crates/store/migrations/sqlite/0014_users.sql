-- Hearth schema 14: users, for a team server. A session or project may belong to a user
-- (`owner`, a user id) and be shared with a team (`team`, a team name); NULL on a single
-- user's Hearth, and for everything made before. A user logs in through an OpenID
-- provider (`issuer` and `subject` name the identity) or with API tokens, kept as their
-- SHA-256 digests only. Teams are their members; a role on a resource (`calendar:<name>`,
-- `project:<id>`) is a grant. Removing a user removes their tokens, memberships and
-- grants; what they owned keeps their id. Times are milliseconds since the Unix epoch.

ALTER TABLE sessions ADD COLUMN owner TEXT;
ALTER TABLE sessions ADD COLUMN team TEXT;
ALTER TABLE projects ADD COLUMN owner TEXT;
ALTER TABLE projects ADD COLUMN team TEXT;

-- What a user's session list asks: their own sessions, and their teams', newest first.
CREATE INDEX sessions_by_owner ON sessions (owner, updated_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX sessions_by_team ON sessions (team, updated_at DESC, id DESC)
    WHERE deleted_at IS NULL AND team IS NOT NULL;

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    issuer TEXT,
    subject TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (issuer, subject)
);

-- Two users are never told apart by the case of their names alone.
CREATE UNIQUE INDEX users_by_folded_name ON users (lower(name));

CREATE TABLE user_tokens (
    digest TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    created_at INTEGER NOT NULL
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
