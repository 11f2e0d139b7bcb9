-- A session the user pinned (listed first) or archived (kept, searchable, out of the
-- recent list): marks of the user's, changed with `session/mark`.
ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_marked ON sessions (pinned, archived, updated_at) WHERE deleted_at IS NULL;

-- What a server asks every few seconds: the proposals another process staged or decided
-- since it last looked.
CREATE INDEX proposals_by_update ON proposals (updated_at);
