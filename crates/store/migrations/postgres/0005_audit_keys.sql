-- Hearth schema 5 (PostgreSQL): audit rows sealed with a key kept outside the database.
ALTER TABLE audit_log ADD COLUMN key_id TEXT;

CREATE INDEX audit_log_by_proposal ON audit_log (proposal_id, decision)
    WHERE proposal_id IS NOT NULL;
