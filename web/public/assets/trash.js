// @ts-check
// The trash: deleted sessions and projects, restorable until they are emptied (after the
// period set in config.toml, or by "Empty the trash", which erases them for good).

import { el, replace, when, message, confirmDialog } from './dom.js';
import { icon } from './icons.js';

/**
 * @typedef {{ kind: 'session' | 'project', id: string, title?: string | null, deletedAt: string, purgeAt?: string | null }} TrashItem
 * @typedef {{ rpc: import('./rpc.js').Rpc, app: any }} PageContext
 */

export class TrashPage {
  /**
   * @param {PageContext} context
   * @param {HTMLElement} host
   */
  constructor(context, host) {
    this.rpc = context.rpc;
    this.app = context.app;
    this.host = host;
    /** @type {TrashItem[]} */
    this.items = [];
    this.list = el('ul', { class: 'trash-list', 'aria-label': 'Deleted sessions and projects' });
    this.status = el('p', { class: 'muted', role: 'status' });
    this.emptyButton = el('button', { class: 'button danger', type: 'button', onclick: () => this.empty() }, icon('trash'), 'Empty the trash');
  }

  render() {
    replace(this.host,
      el('h1', null, 'Trash'),
      el('p', { class: 'muted' }, 'Deleted chats and projects wait here until the trash is emptied. Restoring one brings it back as it was.'),
      el('div', { class: 'page-actions' }, this.emptyButton),
      this.status,
      this.list,
    );
    this.load();
  }

  async load() {
    try {
      const answer = await this.rpc.call('trash/list', {});
      this.items = /** @type {TrashItem[]} */ (answer.items);
      this.draw();
    } catch (error) {
      this.status.textContent = `Could not read the trash: ${message(error)}`;
    }
  }

  draw() {
    this.emptyButton.disabled = this.items.length === 0;
    this.status.textContent = this.items.length ? '' : 'The trash is empty.';
    replace(this.list, ...this.items.map((item) => this.row(item)));
  }

  /** @param {TrashItem} item */
  row(item) {
    const name = item.title || (item.kind === 'session' ? 'New chat' : item.id);
    return el('li', { class: 'trash-item', dataset: { id: item.id, kind: item.kind } },
      el('span', { class: 'trash-title' }, name),
      el('span', { class: 'muted' },
        `${item.kind === 'session' ? 'Chat' : 'Project'} · deleted ${when(item.deletedAt)}`,
        item.purgeAt ? ` · erased for good ${when(item.purgeAt)}` : ''),
      el('button', {
        class: 'button small',
        type: 'button',
        'aria-label': `Restore ${name}`,
        onclick: () => this.restore(item),
      }, icon('retry'), 'Restore'),
    );
  }

  /** @param {TrashItem} item */
  async restore(item) {
    try {
      await this.rpc.call('trash/restore', { kind: item.kind, id: item.id });
      this.items = this.items.filter((candidate) => candidate !== item);
      this.draw();
      this.status.textContent = `Restored ${item.title || item.id}.`;
      if (item.kind === 'session') this.app.loadRecent?.();
      else this.app.loadProjects?.();
    } catch (error) {
      this.status.textContent = `Could not restore: ${message(error)}`;
    }
  }

  async empty() {
    const sure = await confirmDialog(`Erase the ${this.items.length} item${this.items.length === 1 ? '' : 's'} in the trash for good? This cannot be undone.`, 'Empty the trash');
    if (!sure) return;
    try {
      const answer = await this.rpc.call('trash/empty', {});
      await this.load();
      this.status.textContent = `Erased ${answer.erased} for good. ${this.items.length ? '' : 'The trash is empty.'}`.trim();
    } catch (error) {
      this.status.textContent = `Could not empty the trash: ${message(error)}`;
    }
  }
}
