-- Hearth schema 7: deleting erases. From this version on every connection runs with
-- `secure_delete`, so what a deletion removes is overwritten in the file, and a deletion
-- ends with a checkpoint that empties the write-ahead log. Content removed or rewritten
-- before (older versions did not overwrite it) may still sit in free space of the file:
-- the chore below asks the next deletion to rebuild the file once (VACUUM), after which
-- nothing removed before survives either.

CREATE TABLE store_chores (
    chore TEXT PRIMARY KEY
) WITHOUT ROWID;

INSERT INTO store_chores (chore) VALUES ('scrub_free_space');
