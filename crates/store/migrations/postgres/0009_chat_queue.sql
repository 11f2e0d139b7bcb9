-- Hearth schema 9 (PostgreSQL): a chat's queue of waiting messages (JSON array).
ALTER TABLE chats ADD COLUMN queued TEXT;
