-- Hearth schema 9: a chat's queue of messages waiting for its running turn, as a JSON
-- array of texts in sending order (NULL: none). Kept like the draft, so a queue survives
-- reloads, other windows and restarts.
ALTER TABLE chats ADD COLUMN queued TEXT;
