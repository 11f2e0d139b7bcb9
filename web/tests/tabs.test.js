// The tab strip's decisions: which session may be reused or dropped, which tab shows
// after a close, where the shortcuts move, and how failures are explained.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUnused, afterClose, stepTab, explainError, defaultChatOf } from '../public/assets/tabs.js';

const SESSION = 'hearth-session:replay/s1';
const MAIN = 'hearth-chat:replay/s1/default';
const SIDE = 'hearth-chat:replay/s1/side';

/** @param {string} uri @param {object} [origin] */
function chatSummary(uri, origin = { type: 'user' }) {
  return { uri, origin, createdAt: '2025-01-01T00:00:00Z', updatedAt: '2025-01-01T00:00:00Z' };
}

function turn(id) {
  return { id, user: { text: `question ${id}` }, parts: [], startedAt: '2025-01-01T00:00:00Z' };
}

/** A tab's facts: one session, its chats, the chat shown. */
function facts({ chats = [chatSummary(MAIN)], shown = MAIN, turns = [], draft = null, queued = [], typed = '', olderTurns = false, running = false } = {}) {
  const summary = { uri: SESSION, harness: 'replay', provenance: 'hearth', scope: { type: 'global' }, source: 'server', startedAt: '', updatedAt: '' };
  return {
    session: { summary, chats: chats.map((chat) => ({ summary: chat, running })) },
    chat: { summary: chats.find((chat) => chat.uri === shown), turns, draft, queued, olderTurns: false },
    olderTurns,
    typed,
  };
}

test('a fresh landing with nothing typed is unused', () => {
  assert.equal(isUnused(facts()), true);
});

test('a turn, a draft, text typed, a queue or earlier turns make a session used', () => {
  assert.equal(isUnused(facts({ turns: [turn('t1')] })), false);
  assert.equal(isUnused(facts({ draft: 'half a thought' })), false);
  assert.equal(isUnused(facts({ typed: 'typing' })), false);
  assert.equal(isUnused(facts({ queued: [{ text: 'next' }] })), false);
  assert.equal(isUnused(facts({ olderTurns: true })), false);
  assert.equal(isUnused(facts({ running: true })), false);
});

test('whitespace alone is not a draft', () => {
  assert.equal(isUnused(facts({ typed: '  \n', draft: ' ' })), true);
});

test('a side chat with no turns does not make its session unused (the finding)', () => {
  // The side chat shown has no turn, but the session has a main chat it branched from.
  const side = facts({ chats: [chatSummary(MAIN), chatSummary(SIDE, { type: 'sideChat', sourceChat: MAIN, turnId: 't1' })], shown: SIDE });
  assert.equal(isUnused(side), false);
});

test('a session not yet read is never unused', () => {
  assert.equal(isUnused({ session: null, chat: null, olderTurns: false, typed: '' }), false);
  const unread = facts();
  assert.equal(isUnused({ ...unread, chat: null }), false);
});

test('after a close: the next tab to the right, else the one to the left', () => {
  const order = ['a', 'b', 'c'];
  assert.equal(afterClose(order, 'b', 'b'), 'c');
  assert.equal(afterClose(order, 'c', 'c'), 'b');
  assert.equal(afterClose(order, 'a', 'a'), 'b');
  assert.equal(afterClose(['a'], 'a', 'a'), null);
});

test('closing a tab that is not shown keeps the shown one', () => {
  assert.equal(afterClose(['a', 'b', 'c'], 'a', 'c'), 'a');
  assert.equal(afterClose(['a', 'b'], null, 'b'), 'a');
});

test('next and previous wrap around the strip', () => {
  const order = ['a', 'b', 'c'];
  assert.equal(stepTab(order, 'a', 1), 'b');
  assert.equal(stepTab(order, 'c', 1), 'a');
  assert.equal(stepTab(order, 'a', -1), 'c');
  assert.equal(stepTab(order, null, 1), 'a');
  assert.equal(stepTab(order, null, -1), 'c');
  assert.equal(stepTab([], 'a', 1), null);
});

test('a refused connection is explained, with the way to Setup and the original kept', () => {
  const raw = 'error sending request for url (http://127.0.0.1:9/v1/chat/completions): client error (Connect): tcp connect error: Connection refused (os error 111)';
  const explained = explainError(raw);
  assert.equal(explained.setup, true);
  assert.match(explained.summary, /could not be reached/);
  assert.doesNotMatch(explained.summary, /os error/);
  assert.equal(explained.detail, raw);
});

test('a refused key points to Setup', () => {
  const explained = explainError('the provider answered 401 Unauthorized: invalid api key');
  assert.equal(explained.setup, true);
  assert.match(explained.summary, /key/);
});

test('an error Hearth already words for people is shown as it is', () => {
  const text = 'The answer was cut: the step limit was reached.';
  assert.deepEqual(explainError(text), { summary: text, setup: false, detail: text });
  // Words that merely contain "tls" are no transport failure.
  assert.equal(explainError('Nestled settlements').setup, false);
});

test('a session’s default chat', () => {
  assert.equal(defaultChatOf(SESSION), MAIN);
});
