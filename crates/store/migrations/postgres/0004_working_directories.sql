-- Hearth schema 4 (PostgreSQL): where each session's agent works, a JSON array of paths.
ALTER TABLE sessions ADD COLUMN working_directories TEXT;
