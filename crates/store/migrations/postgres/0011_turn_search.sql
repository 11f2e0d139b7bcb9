-- Hearth schema 11 (PostgreSQL): every turn's words, searchable. `turn_search` holds each
-- turn's prompt and answer text, kept in step with `turns` by a trigger (a turn is
-- indexed when inserted and again when it ends), and a trigram index (pg_trgm) finds any
-- three characters of a word, in any case and any script, as the SQLite schema's FTS5
-- trigram index does.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE turn_search (
    chat_id BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    prompt TEXT,
    answer TEXT,
    PRIMARY KEY (chat_id, seq),
    FOREIGN KEY (chat_id, seq) REFERENCES turns (chat_id, seq) ON DELETE CASCADE
);

CREATE INDEX turn_search_words ON turn_search
    USING gin ((coalesce(prompt, '') || E'\n' || coalesce(answer, '')) gin_trgm_ops);

CREATE FUNCTION turn_search_text(body TEXT, OUT prompt TEXT, OUT answer TEXT)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    turn jsonb;
BEGIN
    BEGIN
        turn := body::jsonb;
    EXCEPTION WHEN others THEN
        RETURN;
    END;
    prompt := turn #>> '{user,text}';
    SELECT string_agg(part ->> 'text', E'\n' ORDER BY position)
      INTO answer
      FROM jsonb_array_elements(
               CASE WHEN jsonb_typeof(turn -> 'parts') = 'array' THEN turn -> 'parts' ELSE '[]'::jsonb END
           ) WITH ORDINALITY AS parts (part, position)
     WHERE part ->> 'type' = 'text';
END;
$$;

CREATE FUNCTION turn_search_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.running <> 0 THEN
        RETURN NEW;
    END IF;
    INSERT INTO turn_search (chat_id, seq, prompt, answer)
    SELECT NEW.chat_id, NEW.seq, found.prompt, found.answer FROM turn_search_text(NEW.body) AS found
    ON CONFLICT (chat_id, seq) DO UPDATE SET prompt = excluded.prompt, answer = excluded.answer;
    RETURN NEW;
END;
$$;

CREATE TRIGGER turn_search_insert AFTER INSERT ON turns
    FOR EACH ROW EXECUTE FUNCTION turn_search_follow();
CREATE TRIGGER turn_search_update AFTER UPDATE OF body ON turns
    FOR EACH ROW EXECUTE FUNCTION turn_search_follow();

INSERT INTO turn_search (chat_id, seq, prompt, answer)
SELECT turns.chat_id, turns.seq, found.prompt, found.answer
FROM turns, turn_search_text(turns.body) AS found;
