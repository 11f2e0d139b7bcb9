-- Hearth schema 3 (PostgreSQL): a turn is stored as one JSON body.

CREATE TABLE turns_v3 (
    chat_id BIGINT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    turn_id TEXT NOT NULL,
    -- 1 while the turn has no stop reason (it runs, or the process writing it stopped).
    running BIGINT NOT NULL,
    -- The turn: {"id","user","parts","usage","stop_reason","started_at","completed_at"},
    -- times in milliseconds since the epoch.
    body TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    checkpointed_at BIGINT NOT NULL,
    PRIMARY KEY (chat_id, seq)
);

INSERT INTO turns_v3 (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
SELECT chat_id, seq, turn_id, CASE WHEN stop_reason IS NULL THEN 1 ELSE 0 END,
       json_build_object(
           'id', turn_id,
           'user', user_message::json,
           'parts', parts::json,
           'usage', usage::json,
           'stop_reason', stop_reason::json,
           'started_at', started_at,
           'completed_at', completed_at
       )::text,
       started_at, checkpointed_at
FROM turns;

DROP TABLE turns;
ALTER TABLE turns_v3 RENAME TO turns;
ALTER TABLE turns RENAME CONSTRAINT turns_v3_pkey TO turns_pkey;
CREATE UNIQUE INDEX turns_by_id ON turns (chat_id, turn_id);
