-- Hearth schema 12 (PostgreSQL): the trash (see the SQLite schema of this number).
ALTER TABLE sessions ADD COLUMN trashed BIGINT NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN trashed BIGINT NOT NULL DEFAULT 0;

CREATE INDEX sessions_in_trash ON sessions (deleted_at) WHERE trashed = 1;
CREATE INDEX projects_in_trash ON projects (deleted_at) WHERE trashed = 1;
