// @ts-check
// Search inside one chat, and its export: a bar above the conversation. The search runs
// on the server's full-text index over every turn of the chat (`search/query` with
// `chat`), not only the turns loaded; a hit opens its turn, loading older pages as needed.
// Matches in the turns shown are highlighted with the CSS Custom Highlight API (no
// change to the transcript's DOM).

import { el, replace, message, when } from './dom.js';
import { icon } from './icons.js';

/** @typedef {import('./conversation.js').SessionTab} SessionTab */
/** @typedef {import('../../protocol').SearchHit} SearchHit */

const HIGHLIGHT = 'chat-find';

/**
 * Ranges of every case-insensitive occurrence of the words in the text under `root`.
 * @param {Node} root
 * @param {string[]} words
 * @returns {Range[]}
 */
export function rangesOf(root, words) {
  /** @type {Range[]} */
  const ranges = [];
  const lowered = words.map((word) => word.toLowerCase()).filter((word) => word.length >= 3);
  if (!lowered.length) return ranges;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = (node.textContent ?? '').toLowerCase();
    for (const word of lowered) {
      for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + word.length)) {
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + word.length);
        ranges.push(range);
      }
    }
  }
  return ranges;
}

export class FindBar {
  /** @param {SessionTab} tab */
  constructor(tab) {
    this.tab = tab;
    this.timer = /** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined);
    this.generation = 0;
    this.input = el('input', {
      type: 'search',
      class: 'input find-input',
      placeholder: 'Find in this chat (3 letters or more)',
      'aria-label': 'Find in this chat',
      oninput: () => this.schedule(),
      onkeydown: (/** @type {KeyboardEvent} */ event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          event.stopPropagation();
          this.close();
        }
        if (event.key === 'Enter') {
          event.preventDefault();
          const first = this.results.querySelector('button');
          if (first instanceof HTMLButtonElement) first.click();
        }
      },
    });
    this.status = el('span', { class: 'muted find-status', role: 'status' });
    this.results = el('ul', { class: 'find-results', 'aria-label': 'Turns found in this chat' });
    this.panel = el('div', { class: 'find-panel', hidden: true }, this.input, this.status, this.results);
    this.toggle = el('button', {
      class: 'button subtle small',
      type: 'button',
      'aria-expanded': 'false',
      title: 'Find in this chat',
      onclick: () => (this.panel.hidden ? this.open() : this.close()),
    }, icon('search'), 'Find');
    this.exportButtons = [
      el('button', { class: 'button subtle small', type: 'button', title: 'Download this chat as Markdown', onclick: () => this.download('markdown') }, icon('download'), 'Markdown'),
      el('button', { class: 'button subtle small', type: 'button', title: 'Download this chat as JSON Lines (lossless)', onclick: () => this.download('jsonl') }, icon('download'), 'JSON'),
    ];
    this.error = el('span', { class: 'card-error', role: 'alert', hidden: true });
    this.element = el('div', { class: 'chat-tools' },
      el('div', { class: 'chat-tools-bar' }, this.toggle, el('span', { class: 'spacer' }), ...this.exportButtons, this.error),
      this.panel,
    );
  }

  open() {
    this.panel.hidden = false;
    this.toggle.setAttribute('aria-expanded', 'true');
    this.input.focus();
    this.input.select();
  }

  close() {
    this.panel.hidden = true;
    this.toggle.setAttribute('aria-expanded', 'false');
    this.input.value = '';
    replace(this.results);
    this.status.textContent = '';
    this.highlight([]);
    this.toggle.focus();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), 200);
  }

  async run() {
    const query = this.input.value.trim();
    const words = query.split(/\s+/).filter(Boolean);
    const generation = ++this.generation;
    this.highlight(words);
    if (!words.length || words.some((word) => word.length < 3) || !this.tab.chatUri) {
      replace(this.results);
      this.status.textContent = words.length ? 'Type 3 letters or more per word.' : '';
      return;
    }
    try {
      const page = await this.tab.rpc.call('search/query', { query, chat: this.tab.chatUri, limit: 50 });
      if (generation !== this.generation) return;
      this.status.textContent = page.hits.length
        ? `${page.hits.length}${page.nextCursor ? '+' : ''} turn${page.hits.length === 1 ? '' : 's'} found`
        : 'Not found in this chat.';
      replace(this.results, ...page.hits.map((hit) => this.row(hit)));
    } catch (error) {
      if (generation === this.generation) this.status.textContent = `Search failed: ${message(error)}`;
    }
  }

  /** @param {SearchHit} hit */
  row(hit) {
    return el('li', null,
      el('button', {
        class: 'find-hit',
        type: 'button',
        dataset: { turn: hit.turnId },
        onclick: async () => {
          const found = await this.tab.revealTurn(hit.turnId);
          if (!found) this.status.textContent = 'That turn could not be shown.';
          this.highlight(this.input.value.trim().split(/\s+/));
        },
      },
        el('span', { class: 'recent-meta' }, `turn ${hit.index} · ${when(hit.startedAt)}`),
        el('span', { class: 'hit-snippet' }, ...hit.snippet.map((piece) => (piece.match ? el('mark', null, piece.text) : piece.text))),
      ),
    );
  }

  /**
   * Marks the words in the turns shown (where the browser can).
   * @param {string[]} words
   */
  highlight(words) {
    const registry = /** @type {any} */ (globalThis.CSS)?.highlights;
    const Highlight = /** @type {any} */ (globalThis).Highlight;
    if (!registry || !Highlight) return;
    const ranges = rangesOf(this.tab.transcript, words);
    if (ranges.length) registry.set(HIGHLIGHT, new Highlight(...ranges));
    else registry.delete(HIGHLIGHT);
  }

  /**
   * Downloads the chat's session as Markdown or JSON Lines (`session/export`).
   * @param {'markdown' | 'jsonl'} format
   */
  async download(format) {
    this.error.hidden = true;
    try {
      const exported = await this.tab.rpc.call('session/export', { sessionId: this.tab.uri, format });
      const blob = new Blob([exported.content], { type: exported.mediaType });
      const link = el('a', { href: URL.createObjectURL(blob), download: exported.fileName, class: 'visually-hidden' });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    } catch (error) {
      this.error.textContent = `Could not export: ${message(error)}`;
      this.error.hidden = false;
    }
  }

  /** Shown only when the chat has turns. */
  render() {
    const chat = this.tab.chat;
    this.element.hidden = !chat || (chat.turns.length === 0 && !this.tab.olderTurns);
  }
}
