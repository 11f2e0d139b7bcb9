-- Hearth schema 8 (PostgreSQL): the project registry.
CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    folder TEXT,
    name TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    deleted_at BIGINT
);

CREATE UNIQUE INDEX projects_by_folder ON projects (folder) WHERE deleted_at IS NULL;
