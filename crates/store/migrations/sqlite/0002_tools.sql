-- Hearth schema 2: proposals staged by mutating tools, and the audit log.
-- Times are milliseconds since the Unix epoch (UTC). Hashes are SHA-256, lower-case hex.

-- A change a mutating tool staged. `payload` is canonical JSON and `payload_hash` its
-- hash; an approval records the hash it approved (`approved_hash`), and applying claims
-- the row with one compare-and-set on (id, status, hash). No foreign keys: proposals
-- outlive the sessions that staged them.
CREATE TABLE proposals (
    id TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    session_uri TEXT NOT NULL,
    chat_uri TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    diff TEXT NOT NULL,
    payload TEXT NOT NULL,
    payload_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('pending', 'approved', 'rejected', 'expired', 'applying', 'applied', 'failed')),
    approved_hash TEXT,
    decided_by TEXT,
    decided_at INTEGER,
    reason TEXT,
    outcome TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    applied_at INTEGER
) WITHOUT ROWID;

CREATE INDEX proposals_recent ON proposals (created_at DESC, id DESC);
CREATE INDEX proposals_by_status ON proposals (status, created_at DESC, id DESC);
CREATE INDEX proposals_by_session ON proposals (session_uri, created_at DESC, id DESC);

-- The audit log: append-only, each row's `hash` covering its content and the previous
-- row's hash (`prev_hash`; 64 zeros for the first row).
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    kind TEXT NOT NULL,
    tool TEXT,
    argument_hash TEXT,
    proposal_id TEXT,
    decision TEXT NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only: its rows cannot be changed');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only: its rows cannot be deleted');
END;
