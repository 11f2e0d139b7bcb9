// The page's reducer (web/public/assets/state.js) folds the host's action envelopes the
// way hearth-core's state.rs does: a turn streams in, its tool calls and plan update,
// its end settles what was left open, and a session's chat catalog follows.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reduceChat, reduceSession, pendingPermission, isRunning, partsOf, answerText, compactionNote } from '../public/assets/state.js';

const CHAT = 'hearth-chat:replay/s1/default';
const SIDE = 'hearth-chat:replay/s1/side';
const SESSION = 'hearth-session:replay/s1';
const AT = '2025-01-01T00:00:00Z';

function chatSummary(uri, title = null) {
  return { uri, title, origin: { type: 'user' }, createdAt: AT, updatedAt: AT };
}

function emptyChat() {
  return { summary: chatSummary(CHAT), turns: [], draft: null, queued: [] };
}

function started(id, text = 'hello') {
  return { type: 'turnStarted', turn: { id, user: { text }, parts: [], startedAt: AT } };
}

/** Applies actions in order; returns the turn ids each one reported changed. */
function fold(state, actions) {
  return actions.map((action) => reduceChat(state, action));
}

test('text and reasoning deltas join runs of the same kind', () => {
  const chat = emptyChat();
  const changed = fold(chat, [
    started('t1'),
    { type: 'reasoningDelta', turnId: 't1', text: 'Let me ' },
    { type: 'reasoningDelta', turnId: 't1', text: 'think.' },
    { type: 'textDelta', turnId: 't1', text: 'Hello' },
    { type: 'textDelta', turnId: 't1', text: ', world' },
  ]);
  assert.deepEqual(changed, ['t1', 't1', 't1', 't1', 't1']);
  assert.deepEqual(partsOf(chat.turns[0]), [
    { type: 'reasoning', text: 'Let me think.' },
    { type: 'text', text: 'Hello, world' },
  ]);
  assert.equal(isRunning(chat), true);
});

test('a repeated turnStarted (a replay after a resync) adds no second turn', () => {
  const chat = emptyChat();
  fold(chat, [started('t1'), { type: 'textDelta', turnId: 't1', text: 'kept' }, started('t1')]);
  assert.equal(chat.turns.length, 1);
  assert.equal(partsOf(chat.turns[0])[0].text, 'kept');
});

test('the started turn is a copy: the envelope is not changed by later deltas', () => {
  const chat = emptyChat();
  const action = started('t1');
  fold(chat, [action, { type: 'textDelta', turnId: 't1', text: 'x' }]);
  assert.deepEqual(action.turn.parts, []);
});

test('actions for an unknown turn change nothing', () => {
  const chat = emptyChat();
  fold(chat, [started('t1')]);
  const before = structuredClone(chat);
  const changed = fold(chat, [
    { type: 'textDelta', turnId: 'nope', text: 'x' },
    { type: 'toolCallUpdated', turnId: 't1', callId: 'missing', status: 'completed' },
    { type: 'usageUpdated', turnId: 'nope', usage: { inputTokens: 1, outputTokens: 1 } },
    { type: 'somethingNew', turnId: 't1' },
  ]);
  assert.deepEqual(changed, [null, null, null, null]);
  assert.deepEqual(chat, before);
});

test('a tool call starts, is patched field by field, and gets its result', () => {
  const chat = emptyChat();
  fold(chat, [
    started('t1'),
    { type: 'toolCallStarted', turnId: 't1', call: { callId: 'c1', name: 'read', title: 'Read', status: 'pending', arguments: { path: 'a' } } },
    { type: 'toolCallUpdated', turnId: 't1', callId: 'c1', status: 'running', patch: { title: 'Read a.txt', arguments: null } },
    { type: 'toolCallUpdated', turnId: 't1', callId: 'c1', status: 'completed', result: { content: 'text of a', isError: false } },
  ]);
  const [call] = partsOf(chat.turns[0]);
  assert.equal(call.type, 'toolCall');
  assert.equal(call.title, 'Read a.txt');
  assert.deepEqual(call.arguments, { path: 'a' }, 'a null patch keeps the value');
  assert.equal(call.status, 'completed');
  assert.deepEqual(call.result, { content: 'text of a', isError: false });
});

test('a plan is replaced in place, not appended', () => {
  const chat = emptyChat();
  fold(chat, [
    started('t1'),
    { type: 'planUpdated', turnId: 't1', entries: [{ content: 'one', status: 'pending' }] },
    { type: 'textDelta', turnId: 't1', text: 'working' },
    { type: 'planUpdated', turnId: 't1', entries: [{ content: 'one', status: 'completed' }] },
  ]);
  const parts = partsOf(chat.turns[0]);
  assert.equal(parts.length, 2);
  assert.deepEqual(parts[0], { type: 'plan', entries: [{ content: 'one', status: 'completed' }] });
});

test('a permission request waits until it is resolved', () => {
  const chat = emptyChat();
  const request = { type: 'permissionRequest', requestId: 'r1', title: 'Write a.txt', options: [{ id: 'yes', label: 'Yes', kind: 'allowOnce' }] };
  fold(chat, [started('t1'), { type: 'partAdded', turnId: 't1', part: request }]);
  assert.equal(pendingPermission(chat)?.part.requestId, 'r1');
  fold(chat, [{ type: 'permissionResolved', turnId: 't1', requestId: 'r1', outcome: 'yes' }]);
  assert.equal(pendingPermission(chat), null);
});

test('a compaction is kept in its turn and named by its note', () => {
  const chat = emptyChat();
  fold(chat, [started('t1'), started('t2')]);
  const part = { type: 'compaction', turns: 12, summary: 'The user plans a trip.' };
  fold(chat, [{ type: 'partAdded', turnId: 't2', part }, { type: 'textDelta', turnId: 't2', text: 'ok' }]);
  assert.deepEqual(partsOf(chat.turns[1])[0], part);
  assert.equal(compactionNote(chat.turns[1]), 'Earlier turns summarised (12 turns)');
  assert.equal(compactionNote(chat.turns[0]), null);
  fold(chat, [{ type: 'partAdded', turnId: 't1', part: { type: 'compaction', summary: '' } }]);
  assert.equal(compactionNote(chat.turns[0]), 'Earlier turns summarised');
});

test('a turn that ends settles its open tool calls and unanswered requests', () => {
  const chat = emptyChat();
  fold(chat, [
    started('t1'),
    { type: 'toolCallStarted', turnId: 't1', call: { callId: 'c1', name: 'run', status: 'running' } },
    { type: 'partAdded', turnId: 't1', part: { type: 'permissionRequest', requestId: 'r1', title: 'Run', options: [] } },
    { type: 'turnCompleted', turnId: 't1', stopReason: 'aborted', completedAt: AT, usage: { inputTokens: 3, outputTokens: 4 } },
  ]);
  const [call, request] = partsOf(chat.turns[0]);
  assert.equal(call.status, 'cancelled');
  assert.equal(request.outcome, 'cancelled');
  assert.equal(chat.turns[0].stopReason, 'aborted');
  assert.deepEqual(chat.turns[0].usage, { inputTokens: 3, outputTokens: 4 });
  assert.equal(isRunning(chat), false);
});

test('a turn cut short by a restart leaves its requests expired', () => {
  const chat = emptyChat();
  fold(chat, [
    started('t1'),
    { type: 'partAdded', turnId: 't1', part: { type: 'permissionRequest', requestId: 'r1', title: 'Run', options: [] } },
    { type: 'turnCompleted', turnId: 't1', stopReason: 'incomplete', completedAt: AT },
  ]);
  assert.equal(partsOf(chat.turns[0])[0].outcome, 'expired');
});

test('drafts, the queue, the agent state and the title follow their actions', () => {
  const chat = emptyChat();
  const changed = fold(chat, [
    { type: 'draftChanged', chat: CHAT, draft: 'half' },
    { type: 'queueChanged', chat: CHAT, queued: [{ text: 'a' }, { text: 'b', attachments: [{ name: 'notes.txt', mediaType: 'text/plain', uri: '/data/attachments/x/notes.txt' }] }] },
    { type: 'agentStateChanged', chat: CHAT, state: { models: { current: 'm', choices: [] } } },
    { type: 'chatUpdated', chat: chatSummary(CHAT, 'Named') },
    { type: 'chatUpdated', chat: chatSummary(SIDE, 'Not this one') },
  ]);
  assert.deepEqual(changed, [null, null, null, null, null]);
  assert.equal(chat.draft, 'half');
  assert.deepEqual(chat.queued.map((queued) => queued.text), ['a', 'b']);
  assert.equal(chat.queued[1].attachments[0].name, 'notes.txt');
  assert.equal(chat.agent.models.current, 'm');
  assert.equal(chat.summary.title, 'Named');
  fold(chat, [{ type: 'draftChanged', chat: CHAT }, { type: 'queueChanged', chat: CHAT }]);
  assert.equal(chat.draft, null, 'a cleared draft');
  assert.deepEqual(chat.queued, []);
});

test('a session’s catalog follows chats added, updated, running and removed', () => {
  const summary = { uri: SESSION, title: null, harness: 'replay', provenance: 'hearth', scope: { type: 'global' }, source: 'server', startedAt: AT, updatedAt: AT };
  const session = { summary, chats: [{ summary: chatSummary(CHAT), running: false }] };
  reduceSession(session, { type: 'chatAdded', chat: chatSummary(SIDE) });
  reduceSession(session, { type: 'chatAdded', chat: chatSummary(SIDE, 'again') });
  assert.equal(session.chats.length, 2, 'a chat added twice is listed once');
  assert.equal(session.chats[1].summary.title, 'again');
  reduceSession(session, { type: 'chatActivity', chat: SIDE, running: true });
  assert.equal(session.chats[1].running, true);
  reduceSession(session, { type: 'chatUpdated', chat: chatSummary(SIDE, 'Side') });
  assert.equal(session.chats[1].summary.title, 'Side');
  reduceSession(session, { type: 'sessionUpdated', summary: { ...summary, uri: 'hearth-session:replay/other', title: 'Other' } });
  assert.equal(session.summary.title, null, 'another session’s update is not this one’s');
  reduceSession(session, { type: 'sessionUpdated', summary: { ...summary, title: 'Mine' } });
  assert.equal(session.summary.title, 'Mine');
  reduceSession(session, { type: 'chatRemoved', chat: SIDE });
  assert.deepEqual(session.chats.map((chat) => chat.summary.uri), [CHAT]);
});

test('the answer copied is the text parts only, in order', () => {
  const turn = {
    id: 't1',
    user: { text: 'q' },
    parts: [
      { type: 'reasoning', text: 'thinking' },
      { type: 'text', text: 'First part. ' },
      { type: 'toolCall', callId: 'c1', name: 'read', arguments: {}, status: 'completed' },
      { type: 'text', text: '  ' },
      { type: 'text', text: 'Second part.' },
    ],
    startedAt: AT,
  };
  assert.equal(answerText(turn), 'First part.\n\nSecond part.');
  assert.equal(answerText({ id: 't2', user: { text: 'q' }, startedAt: AT }), '');
});
