-- Hearth schema 2 (PostgreSQL): proposals staged by mutating tools, and the audit log,
-- append-only (rows can be neither changed nor deleted).

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
    decided_at BIGINT,
    reason TEXT,
    outcome TEXT,
    error TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    applied_at BIGINT
);

CREATE INDEX proposals_recent ON proposals (created_at DESC, id DESC);
CREATE INDEX proposals_by_status ON proposals (status, created_at DESC, id DESC);
CREATE INDEX proposals_by_session ON proposals (session_uri, created_at DESC, id DESC);

CREATE TABLE audit_log (
    seq BIGINT PRIMARY KEY,
    at BIGINT NOT NULL,
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

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'the audit log is append-only: its rows cannot be changed';
    END IF;
    RAISE EXCEPTION 'the audit log is append-only: its rows cannot be deleted';
END;
$$;

CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
