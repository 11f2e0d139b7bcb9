// Project settings and provider setup: how a project's context is summed up (a failed
// source is never hidden behind "ready"), and the request a filled provider form makes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contextSummary } from '../public/assets/project_settings.js';
import { addRequest } from '../public/assets/provider_setup.js';

/** @param {string} target @param {string} state */
function source(target, state) {
  return { kind: 'file', target, state };
}

test('a failed source is said before anything else', () => {
  const context = { projectId: 'p', materializing: true, failed: 1, sources: [source('a.md', 'failed'), source('b.md', 'materializing')] };
  assert.equal(contextSummary(context), '1 of 2 sources failed');
});

test('preparing, not prepared yet, ready and no sources are told apart', () => {
  assert.equal(contextSummary({ projectId: 'p', materializing: true, failed: 0, sources: [source('a.md', 'materializing')] }), 'preparing context');
  assert.equal(contextSummary({ projectId: 'p', materializing: false, failed: 0, sources: [source('a.md', 'pending')] }), 'context not prepared yet');
  assert.equal(contextSummary({ projectId: 'p', materializing: false, failed: 0, sources: [source('a.md', 'ready')] }), 'context ready');
  assert.equal(contextSummary({ projectId: 'p', materializing: false, failed: 0, sources: [] }), 'no context sources');
});

test('a provider form becomes its request: trimmed, empty fields left out, the key as chosen', () => {
  const form = { id: ' lab ', kind: 'openai', baseUrl: ' http://127.0.0.1:8080/v1 ', model: '', keySource: 'pasted', key: 'sk-1', variable: '' };
  assert.deepEqual(addRequest(form), { id: 'lab', kind: 'openai', baseUrl: 'http://127.0.0.1:8080/v1', key: { type: 'pasted', key: 'sk-1' } });
  assert.deepEqual(addRequest({ ...form, kind: 'anthropic', baseUrl: '', model: 'claude', keySource: 'environment', variable: ' MY_KEY ' }),
    { id: 'lab', kind: 'anthropic', model: 'claude', key: { type: 'environment', variable: 'MY_KEY' } });
  assert.deepEqual(addRequest({ ...form, keySource: 'none' }).key, { type: 'none' });
});
