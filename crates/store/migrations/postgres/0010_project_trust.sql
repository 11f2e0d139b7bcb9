-- Hearth schema 10 (PostgreSQL): what the user trusted of each project.
ALTER TABLE projects ADD COLUMN trusted_digest TEXT;
