-- Hearth schema 5: audit rows sealed with a key kept outside the database.
-- `key_id` names the key whose HMAC-SHA256 is the row's `hash`; NULL for rows written
-- before this version, whose `hash` is a plain SHA-256 (they stay verifiable, and the
-- first keyed row's seal covers their last hash).
ALTER TABLE audit_log ADD COLUMN key_id TEXT;

-- Finding the `applied` entry of each applied proposal (`hearth audit verify`).
CREATE INDEX audit_log_by_proposal ON audit_log (proposal_id, decision)
    WHERE proposal_id IS NOT NULL;
