-- Hearth schema 3: a turn is stored as one JSON body, so a chat's turns are read back as
-- one array SQLite joins without re-assembling each row.

CREATE TABLE turns_v3 (
    chat_id INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    turn_id TEXT NOT NULL,
    -- 1 while the turn has no stop reason (it runs, or the process writing it stopped).
    running INTEGER NOT NULL,
    -- The turn: {"id","user","parts","usage","stop_reason","started_at","completed_at"},
    -- times in milliseconds since the epoch.
    body TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    checkpointed_at INTEGER NOT NULL,
    PRIMARY KEY (chat_id, seq)
) WITHOUT ROWID;

INSERT INTO turns_v3 (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
SELECT chat_id, seq, turn_id, stop_reason IS NULL,
       json_object(
           'id', turn_id,
           'user', json(user_message),
           'parts', json(parts),
           'usage', json(usage),
           'stop_reason', json(stop_reason),
           'started_at', started_at,
           'completed_at', completed_at
       ),
       started_at, checkpointed_at
FROM turns;

DROP TABLE turns;
ALTER TABLE turns_v3 RENAME TO turns;
CREATE UNIQUE INDEX turns_by_id ON turns (chat_id, turn_id);
