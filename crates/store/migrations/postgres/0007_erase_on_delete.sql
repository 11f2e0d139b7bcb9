-- Hearth schema 7 (PostgreSQL): the chores table of the SQLite schema of this number.
-- PostgreSQL has no file-level scrub to schedule: a deletion's rows are removed by the
-- server and vacuumed; keeping deleted content off the disk is the server's storage
-- encryption and vacuum policy.
CREATE TABLE store_chores (
    chore TEXT PRIMARY KEY
);
