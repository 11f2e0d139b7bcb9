-- Hearth schema 12: the trash. A session or project the user deletes is moved to the
-- trash: it gets `deleted_at` as before — so every listing, lookup, search, subscription
-- and external discovery treats it as deleted, and an agent listing the session again
-- does not bring it back — but keeps its content, and `trashed` = 1 says it can still be
-- restored. Emptying the trash erases it as deleting did before (its chats and turns
-- removed and overwritten, a tombstone kept) and sets `trashed` back to 0.

ALTER TABLE sessions ADD COLUMN trashed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN trashed INTEGER NOT NULL DEFAULT 0;

CREATE INDEX sessions_in_trash ON sessions (deleted_at) WHERE trashed = 1;
CREATE INDEX projects_in_trash ON projects (deleted_at) WHERE trashed = 1;
