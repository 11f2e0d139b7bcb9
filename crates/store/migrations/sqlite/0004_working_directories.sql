-- Hearth schema 4: each session records where its agent works. `working_directories` is a
-- JSON array of absolute paths (the working directory first, then additional directories);
-- NULL for sessions stored before, which use the host's configured directories.

ALTER TABLE sessions ADD COLUMN working_directories TEXT;
