// @ts-check
// The tab strip's decisions, kept free of the page so `node --test` can check them:
// which session is unused (and so may be reused or dropped), which tab is shown after
// one closes, which tab a shortcut moves to, and what an error means to a user.

/** @typedef {import('../../protocol').ChatState} ChatState */
/** @typedef {import('../../protocol').SessionState} SessionState */

/**
 * What the page knows about a session open in a tab.
 * @typedef {object} TabFacts
 * @property {SessionState | null} session   its catalog, once read
 * @property {ChatState | null} chat         the chat shown, once read
 * @property {boolean} olderTurns            turns before those loaded remain
 * @property {string} typed                  what the composer holds now
 */

/**
 * Whether a session is an unused landing: one chat, no turn, nothing typed, nothing
 * queued, no draft kept on the server. Only such a session may be reused for a new chat
 * or dropped when its tab closes; anything else is the user's to delete.
 * @param {TabFacts} tab
 */
export function isUnused(tab) {
  const { session, chat } = tab;
  if (!session || !chat) return false;
  if (session.chats.length !== 1 || session.chats[0].summary.uri !== chat.summary.uri) return false;
  if (session.chats[0].running) return false;
  if (chat.turns.length || tab.olderTurns || chat.olderTurns) return false;
  if (tab.typed.trim() || (chat.draft ?? '').trim()) return false;
  return !(chat.queued ?? []).length;
}

/**
 * A session's default chat (`hearth-session:<harness>/<id>` → `hearth-chat:<harness>/<id>/default`).
 * @param {string} session
 */
export function defaultChatOf(session) {
  return `hearth-chat:${session.replace(/^hearth-session:/, '')}/default`;
}

/**
 * The tab shown after `closed` closes: the one after it in the strip, else the one
 * before; null when no other tab is left.
 * @param {string[]} order   the tabs in the strip, left to right
 * @param {string | null} active
 * @param {string} closed
 * @returns {string | null}
 */
export function afterClose(order, active, closed) {
  const rest = order.filter((uri) => uri !== closed);
  if (active !== closed) return active && rest.includes(active) ? active : rest[rest.length - 1] ?? null;
  const index = order.indexOf(closed);
  if (index < 0) return rest[rest.length - 1] ?? null;
  return rest[Math.min(index, rest.length - 1)] ?? null;
}

/**
 * The tab `step` places from the active one, wrapping around the strip.
 * @param {string[]} order
 * @param {string | null} active
 * @param {number} step   1 for the next tab, -1 for the previous one
 * @returns {string | null}
 */
export function stepTab(order, active, step) {
  if (!order.length) return null;
  const index = active ? order.indexOf(active) : -1;
  if (index < 0) return order[step > 0 ? 0 : order.length - 1];
  const length = order.length;
  return order[(((index + step) % length) + length) % length];
}

/**
 * A failure's text in words a user can act on: what happened and whether Setup is the
 * place to fix it. The original text stays available as the detail.
 * @param {string} text
 * @returns {{ summary: string, setup: boolean, detail: string }}
 */
export function explainError(text) {
  const lower = text.toLowerCase();
  /** @type {[RegExp, string][]} */
  const known = [
    [/connection refused|os error 111|error 10061|econnrefused/, 'The model provider could not be reached: nothing answers at its address. Start it, or check its address in Setup.'],
    [/dns error|failed to lookup address|name or service not known|no such host|enotfound/, 'The model provider’s host name could not be found. Check its address in Setup.'],
    [/timed out|timeout|deadline has elapsed/, 'The model provider did not answer in time. Try again, or check the provider in Setup.'],
    [/\b401\b|unauthori[sz]ed|invalid api key|incorrect api key|authentication/, 'The model provider refused the key. Check the provider’s key in Setup.'],
    [/\b403\b|forbidden|permission denied by the provider/, 'The model provider refused access for this key. Check the provider in Setup.'],
    [/\b404\b.*model|model.*(not found|does not exist)/, 'The model provider does not know this model. Pick another model, or check the provider in Setup.'],
    [/tcp connect error|error sending request|connection reset|broken pipe|\btls\b|certificate/, 'The connection to the model provider failed. Check its address in Setup.'],
    [/not installed|no such file or directory \(os error 2\)|command not found|could not start/, 'The agent could not be started. Check that it is installed, in Setup.'],
  ];
  for (const [pattern, summary] of known) {
    if (pattern.test(lower)) return { summary, setup: true, detail: text };
  }
  return { summary: text, setup: false, detail: text };
}
