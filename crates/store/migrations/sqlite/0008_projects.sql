-- Hearth schema 8: the project registry. A project is a folder holding `project.md`,
-- whose front matter carries the project's id, so the id survives the folder being
-- renamed or moved: `folder` is where it was last seen, re-linked when the user points
-- Hearth at the new place. A deleted project keeps a tombstone (id and time); its
-- sessions keep their scope and stay readable. Times are milliseconds since the Unix
-- epoch (UTC).

CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    folder TEXT,
    name TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    deleted_at INTEGER
);

CREATE UNIQUE INDEX projects_by_folder ON projects (folder) WHERE deleted_at IS NULL;
