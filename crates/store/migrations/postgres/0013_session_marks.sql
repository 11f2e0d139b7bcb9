-- Hearth schema 13 (PostgreSQL): pinned and archived sessions, and proposals by change.
ALTER TABLE sessions ADD COLUMN pinned BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN archived BIGINT NOT NULL DEFAULT 0;
CREATE INDEX sessions_marked ON sessions (pinned, archived, updated_at) WHERE deleted_at IS NULL;

CREATE INDEX proposals_by_update ON proposals (updated_at);
