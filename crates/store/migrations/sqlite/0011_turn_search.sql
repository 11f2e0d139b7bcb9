-- Hearth schema 11: every turn's words, searchable. `turn_search` is an FTS5 index of each
-- turn's prompt and answer text (trigram tokens: any three characters of a word find it,
-- in any script). Its rowid is the turn's key, chat_id * 2^32 + seq, so the index follows
-- the `turns` table through triggers: a turn is indexed when it is inserted (its prompt)
-- and again when it ends (its answer; checkpoints of a running turn are not indexed), and
-- leaves the index when it is deleted (with its chat or session). `secure-delete` removes
-- a deleted turn's words from the index itself, not only from what queries return. A body
-- that is not valid JSON (a damaged row) is indexed as empty rather than failing the write.

CREATE VIRTUAL TABLE turn_search USING fts5 (prompt, answer, tokenize = 'trigram');

INSERT INTO turn_search (turn_search, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER turn_search_insert AFTER INSERT ON turns BEGIN
    INSERT INTO turn_search (rowid, prompt, answer)
    VALUES (
        NEW.chat_id * 4294967296 + NEW.seq,
        json_extract(CASE WHEN json_valid(NEW.body) THEN NEW.body END, '$.user.text'),
        (SELECT group_concat(json_extract(part.value, '$.text'), char(10))
         FROM json_each(CASE WHEN json_valid(NEW.body) THEN NEW.body END, '$.parts') AS part
         WHERE json_extract(part.value, '$.type') = 'text')
    );
END;

CREATE TRIGGER turn_search_update AFTER UPDATE OF body ON turns
WHEN NEW.running = 0 BEGIN
    DELETE FROM turn_search WHERE rowid = OLD.chat_id * 4294967296 + OLD.seq;
    INSERT INTO turn_search (rowid, prompt, answer)
    VALUES (
        NEW.chat_id * 4294967296 + NEW.seq,
        json_extract(CASE WHEN json_valid(NEW.body) THEN NEW.body END, '$.user.text'),
        (SELECT group_concat(json_extract(part.value, '$.text'), char(10))
         FROM json_each(CASE WHEN json_valid(NEW.body) THEN NEW.body END, '$.parts') AS part
         WHERE json_extract(part.value, '$.type') = 'text')
    );
END;

CREATE TRIGGER turn_search_delete AFTER DELETE ON turns BEGIN
    DELETE FROM turn_search WHERE rowid = OLD.chat_id * 4294967296 + OLD.seq;
END;

INSERT INTO turn_search (rowid, prompt, answer)
SELECT turns.chat_id * 4294967296 + turns.seq,
       json_extract(CASE WHEN json_valid(turns.body) THEN turns.body END, '$.user.text'),
       (SELECT group_concat(json_extract(part.value, '$.text'), char(10))
        FROM json_each(CASE WHEN json_valid(turns.body) THEN turns.body END, '$.parts') AS part
        WHERE json_extract(part.value, '$.type') = 'text')
FROM turns;
