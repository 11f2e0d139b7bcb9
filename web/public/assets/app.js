// @ts-check
// Agent Home: the shell. A sidebar (new chat, places, recent chats), a tab strip of open
// sessions whose views stay mounted, and the pages (projects, calendar, proposals,
// audit, setup). Everything it shows comes over the same JSON-RPC protocol every other
// client speaks.

import { Rpc } from './rpc.js';
import { el, replace, when, message, confirmDialog, promptDialog } from './dom.js';
import { SessionTab } from './conversation.js';
import { CalendarPage } from './calendar.js';
import { icon } from './icons.js';
import { ProposalsPage, AuditPage, SetupPage, ProjectsPage, trustBeforeEntering } from './pages.js';
import { TrashPage } from './trash.js';
import { isUnused, afterClose, stepTab, defaultChatOf } from './tabs.js';
import { ProjectSettingsPage } from './project_settings.js';
import { ProviderSetupPage } from './provider_setup.js';
import { forgetProviders } from './models.js';

/** @typedef {import('../../protocol').SessionSummary} SessionSummary */
/** @typedef {import('../../protocol').HarnessInfo} HarnessInfo */
/** @typedef {import('../../protocol').Project} Project */
/** @typedef {import('../../protocol').SearchHit} SearchHit */

const TABS_KEY = 'hearth.tabs';
const THEME_KEY = 'hearth.theme';
/** Sessions read per page of the Recent chats list. */
const RECENT_PAGE = 50;
/** How long after a keystroke in the search box the server is asked. */
const SEARCH_DELAY_MS = 200;
/** The title of the session the calendar's Ask bar talks to. */
const CALENDAR_TITLE = 'Calendar';

/** The keyboard shortcuts, as the help lists them. */
const SHORTCUTS = [
  ['Ctrl+Shift+O', 'New chat'],
  ['Ctrl+K', 'Search chats'],
  ['Esc', 'Stop the answer being written'],
  ['Alt+↓', 'Next open chat'],
  ['Alt+↑', 'Previous open chat'],
  ['?', 'Show these shortcuts (outside a text field)'],
];

class App {
  constructor() {
    this.rpc = new Rpc((status, detail) => this.status(status, detail));
    /** @type {Map<string, SessionTab>} */
    this.tabs = new Map();
    /** @type {string | null} */
    this.active = null;
    /** @type {SessionSummary[]} */
    this.recent = [];
    /** @type {SessionSummary[]} the pinned sessions, listed first */
    this.pinned = [];
    /** whether Recent chats shows the archived sessions instead */
    this.archivedView = false;
    /** @type {string | null} where the next page of Recent chats starts */
    this.recentCursor = null;
    /** @type {SessionSummary[]} the sessions whose titles match the search */
    this.found = [];
    /** @type {SearchHit[]} the turns whose words match the search */
    this.messageHits = [];
    /** @type {string | null} */
    this.foundCursor = null;
    this.loadingMore = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.searchTimer = undefined;
    /** @type {Promise<string | null> | null} a landing being found or made */
    this.landingPending = null;
    /** @type {Project[]} */
    this.projects = [];
    /** @type {string | null} the project entered, if any */
    this.scope = null;
    this.search = '';
    /** @type {{render: () => void, leave?: () => void, proposalChanged?: () => void} | null} */
    this.page = null;
    this.followingSystem = false;
    this.banner = el('div', { class: 'banner', role: 'status', 'aria-live': 'polite', hidden: true });
    this.announcer = el('div', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
    this.searchInput = el('input', {
      class: 'input search',
      type: 'search',
      placeholder: 'Search chats  (Ctrl+K)',
      'aria-label': 'Search chats by title',
      oninput: () => {
        this.search = this.searchInput.value.trim().toLowerCase();
        clearTimeout(this.searchTimer);
        this.searchTimer = setTimeout(() => this.searchChats(), SEARCH_DELAY_MS);
        this.renderRecent();
      },
    });
    this.recentList = el('ul', { class: 'recent-list', 'aria-label': 'Recent chats' });
    this.moreButton = el('button', { class: 'button subtle small more-chats', type: 'button', hidden: true, onclick: () => this.loadMore() }, 'Show more chats');
    // The control is the list's last row: scrolled into view, it loads the next page.
    this.moreRow = el('li', { class: 'more-row' }, this.moreButton);
    this.moreObserver = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.loadMore();
    }, { root: this.recentList });
    this.moreObserver.observe(this.moreButton);
    this.scopeBox = el('div', { class: 'scope', hidden: true });
    this.pendingBadge = el('span', { class: 'badge count', hidden: true });
    this.nav = el('nav', { class: 'places', 'aria-label': 'Places' },
      this.link('#/', 'Chats'),
      this.link('#/projects', 'Projects'),
      this.link('#/calendar', 'Calendar'),
      this.link('#/proposals', 'Proposals', this.pendingBadge),
      this.link('#/audit', 'Audit log'),
      this.link('#/setup', 'Setup'),
      this.link('#/trash', 'Trash'),
    );
    const sidebar = el('aside', { class: 'sidebar', id: 'sidebar', 'aria-label': 'Hearth' },
      el('div', { class: 'brand' },
        el('img', { src: '/favicon.svg', alt: '', width: 22, height: 22 }),
        el('span', null, 'Hearth'),
        el('button', { class: 'button subtle small theme', type: 'button', 'aria-label': 'Switch light or dark', onclick: () => this.toggleTheme() }, icon('theme')),
        el('button', { class: 'button subtle small help', type: 'button', 'aria-label': 'Keyboard shortcuts', 'aria-keyshortcuts': '?', onclick: () => this.showShortcuts() }, '?'),
      ),
      el('button', { class: 'button primary new-chat', type: 'button', onclick: () => this.newChat() }, icon('plus'), 'New chat'),
      this.scopeBox,
      this.nav,
      el('h2', { class: 'shelf-title' }, 'Recent chats'),
      this.searchInput,
      this.recentList,
      this.archivedToggle = el('button', {
        class: 'button subtle small archived-toggle',
        type: 'button',
        'aria-pressed': 'false',
        onclick: () => this.showArchived(!this.archivedView),
      }, icon('archive'), 'Archived chats'),
    );
    this.tabStrip = el('div', { class: 'tab-strip', role: 'tablist', 'aria-label': 'Open sessions' });
    this.views = el('div', { class: 'views' });
    // The tab list holds only tabs; the new-chat button sits beside it.
    const tabBar = el('div', { class: 'tab-bar' }, this.tabStrip,
      el('button', { class: 'tab-new', type: 'button', 'aria-label': 'New chat', title: 'New chat', onclick: () => this.newChat() }, icon('plus')));
    this.home = el('div', { class: 'home' }, el('h1', { class: 'visually-hidden' }, 'Chats'), tabBar, this.views);
    this.pageHost = el('div', { class: 'page', hidden: true });
    this.login = el('div', { class: 'login', hidden: true },
      el('h1', null, 'Log in to Hearth'),
      el('p', null, 'This browser is not logged in. Run this beside the running server and open the link it prints:'),
      el('pre', null, 'hearth login'),
      el('p', { class: 'muted' }, 'The link works once and keeps this browser logged in across server and browser restarts, for 30 days unless ', el('code', null, '[server] login_days'), ' says otherwise, or until ', el('code', null, 'hearth login --revoke'), '. ', el('code', null, 'hearth serve'), ' prints one when it starts.'),
    );
    // A team server also logs its users in with the team's OpenID provider.
    this.teamLogin = el('p', { hidden: true },
      el('a', { class: 'button primary', href: '/auth/oidc' }, 'Log in with your team account'));
    this.login.insertBefore(this.teamLogin, this.login.children[1]);
    // Below 760 px the sidebar is a drawer this button opens.
    this.menuButton = el('button', { class: 'button subtle menu-button', type: 'button', 'aria-label': 'Menu', 'aria-controls': 'sidebar', 'aria-expanded': 'false', onclick: () => this.toggleMenu() }, icon('menu'));
    const topBar = el('div', { class: 'top-bar' }, this.menuButton, el('span', { class: 'top-bar-name' }, 'Hearth'));
    this.main = el('main', { class: 'main', id: 'main' }, topBar, this.banner, this.login, this.home, this.pageHost, this.announcer);
    const skip = el('a', { class: 'skip', href: '#main', onclick: (/** @type {Event} */ event) => { event.preventDefault(); this.main.focus(); } }, 'Skip to content');
    this.main.tabIndex = -1;
    this.scrim = el('div', { class: 'scrim', onclick: () => this.toggleMenu(false) });
    this.sidebar = sidebar;
    replace(document.body, skip, el('div', { class: 'shell' }, sidebar, this.scrim, this.main));
    // A place chosen from the drawer closes it; so does Escape.
    sidebar.addEventListener('click', (event) => {
      if (document.body.dataset.menu === 'open' && event.target instanceof Element && event.target.closest('a, .recent-open, .new-chat')) this.toggleMenu(false);
    });
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && document.body.dataset.menu === 'open') {
        this.toggleMenu(false);
        this.menuButton.focus();
      }
    });
    this.tabStrip.addEventListener('keydown', (event) => this.tabKeys(event));
    document.addEventListener('keydown', (event) => this.shortcut(event));
    this.applyTheme(localStorage.getItem(THEME_KEY));
    window.addEventListener('hashchange', () => this.route());
    window.addEventListener('pagehide', () => {
      for (const tab of this.tabs.values()) tab.flushDraft();
    });
    document.addEventListener('landing', (event) => this.fillLanding(/** @type {CustomEvent} */ (event).detail));
    this.rpc.connect();
  }


  /**
   * Opens or closes the sidebar as a drawer (narrow screens).
   * @param {boolean} [open] absent: the other state
   */
  toggleMenu(open) {
    const next = open ?? document.body.dataset.menu !== 'open';
    if (next) document.body.dataset.menu = 'open';
    else delete document.body.dataset.menu;
    this.menuButton.setAttribute('aria-expanded', String(next));
    if (next) {
      const first = this.sidebar.querySelector('.new-chat');
      if (first instanceof HTMLElement) first.focus();
    }
  }

  /**
   * @param {string} href
   * @param {string} label
   * @param {Node} [extra]
   */
  link(href, label, extra) {
    return el('a', { href, class: 'place', dataset: { route: href } }, label, extra || null);
  }

  /**
   * @param {import('./rpc.js').Status} status
   * @param {string} [detail]
   */
  status(status, detail) {
    document.body.dataset.connection = status;
    this.login.hidden = status !== 'login';
    this.home.hidden = status === 'login' || this.routeName() !== 'home';
    this.pageHost.hidden = status === 'login' || this.routeName() === 'home';
    if (status === 'offline') {
      this.showBanner('Hearth is not reachable — reconnecting… Drafts and chats are kept on the server.', 'warn');
    } else if (status === 'restarted') {
      this.showBanner('Reconnected to Hearth.', 'ok');
      setTimeout(() => {
        if (document.body.dataset.connection === 'restarted') this.banner.hidden = true;
      }, 3000);
      this.afterConnect(true);
    } else if (status === 'open') {
      this.banner.hidden = true;
      this.afterConnect(false);
    } else if (status === 'connecting') {
      this.showBanner('Connecting to Hearth…', 'info');
    } else if (status === 'login') {
      this.banner.hidden = true;
      this.offerTeamLogin();
    }
    if (detail) console.warn(detail);
  }

  /** Shows the team login when the server offers one (`GET /auth/methods`). */
  async offerTeamLogin() {
    try {
      const answer = await fetch('/auth/methods', { cache: 'no-store' });
      if (!answer.ok) return;
      const methods = await answer.json();
      this.teamLogin.hidden = !methods.oidc;
    } catch {
      // The one-time link still works.
    }
  }

  /**
   * @param {string} text
   * @param {'warn' | 'ok' | 'info'} kind
   */
  showBanner(text, kind) {
    this.banner.textContent = text;
    this.banner.className = `banner ${kind}`;
    this.banner.hidden = false;
  }

  /** @param {boolean} again */
  async afterConnect(again) {
    if (!again) {
      this.rpc.subscribe('hearth-root:', (delivery) => {
        if (delivery.type !== 'envelope') return;
        const action = delivery.envelope.action;
        if (action.type === 'sessionAdded' || action.type === 'sessionUpdated') {
          this.place(action.summary);
          this.found = this.found.map((s) => (s.uri === action.summary.uri ? action.summary : s));
          this.renderRecent();
        } else if (action.type === 'proposalChanged') {
          // The badge and the page on view follow the server, not a timer.
          this.countPending();
          this.page?.proposalChanged?.();
        } else if (action.type === 'harnessesChanged') {
          // A provider was added while the server runs: the composers offer it now.
          if (this.rpc.server) this.rpc.server.harnesses = action.harnesses;
          forgetProviders(this.rpc);
          for (const tab of this.tabs.values()) tab.renderHarness();
        } else if (action.type === 'sessionRemoved') {
          this.recent = this.recent.filter((s) => s.uri !== action.session);
          this.pinned = this.pinned.filter((s) => s.uri !== action.session);
          this.found = this.found.filter((s) => s.uri !== action.session);
          this.renderRecent();
          const tab = this.tabs.get(action.session);
          if (tab) this.dropTab(tab);
        }
      });
      await this.restoreTabs();
    }
    await Promise.all([this.loadRecent(), this.loadProjects(), this.countPending()]);
    this.route();
  }

  harnesses() {
    return this.rpc.server?.harnesses ?? [];
  }

  /** @param {string} id */
  harnessOf(id) {
    return this.harnesses().find((harness) => harness.id === id);
  }

  /**
   * The `session/list` params of the scope entered (the global scope when none).
   * @param {string | null} cursor
   * @returns {import('../../protocol').SessionListParams}
   */
  listParams(cursor) {
    /** @type {import('../../protocol').SessionListParams} */
    const params = {
      limit: RECENT_PAGE,
      scope: this.scope ? { type: 'project', projectId: this.scope } : { type: 'global' },
    };
    if (cursor) params.cursor = cursor;
    return params;
  }

  /**
   * The params of a page of Recent chats: the pinned ones come apart, the archived ones
   * only in the archived view.
   * @param {string | null} cursor
   */
  recentParams(cursor) {
    return this.archivedView
      ? { ...this.listParams(cursor), archived: true }
      : { ...this.listParams(cursor), archived: false, pinned: false };
  }

  /**
   * Puts a session where its marks say: pinned, recent or archived.
   * @param {SessionSummary} summary
   */
  place(summary) {
    this.pinned = this.pinned.filter((s) => s.uri !== summary.uri);
    this.recent = this.recent.filter((s) => s.uri !== summary.uri);
    if (Boolean(summary.archived) !== this.archivedView) return;
    if (summary.pinned && !this.archivedView) this.pinned = [summary, ...this.pinned];
    else this.recent = [summary, ...this.recent];
  }

  /** @param {boolean} archived */
  async showArchived(archived) {
    this.archivedView = archived;
    this.archivedToggle.setAttribute('aria-pressed', String(archived));
    replace(this.archivedToggle, icon(archived ? 'left' : 'archive'), archived ? 'Back to recent chats' : 'Archived chats');
    await this.loadRecent();
  }

  async loadRecent() {
    try {
      const [page, pinned] = await Promise.all([
        this.rpc.call('session/list', this.recentParams(null)),
        this.archivedView
          ? Promise.resolve({ sessions: [] })
          : this.rpc.call('session/list', { ...this.listParams(null), limit: 100, pinned: true, archived: false }),
      ]);
      this.recent = page.sessions;
      this.pinned = pinned.sessions;
      this.recentCursor = page.nextCursor ?? null;
    } catch (error) {
      this.recent = [];
      this.recentCursor = null;
      replace(this.recentList, el('li', { class: 'notice error' }, `Could not list the chats: ${message(error)}`));
      return;
    }
    if (this.search) await this.searchChats();
    else this.renderRecent();
  }

  /** Asks the server for the chats whose titles hold the search text, over all of them. */
  async searchChats() {
    const search = this.search;
    if (!search) {
      this.found = [];
      this.foundCursor = null;
      this.messageHits = [];
      this.renderRecent();
      return;
    }
    try {
      const [page, hits] = await Promise.all([
        this.rpc.call('session/list', { ...this.listParams(null), titleContains: search }),
        this.searchMessages(search),
      ]);
      if (search !== this.search) return;
      this.found = page.sessions;
      this.foundCursor = page.nextCursor ?? null;
      this.messageHits = hits;
    } catch (error) {
      replace(this.recentList, el('li', { class: 'notice error' }, `Could not search the chats: ${message(error)}`));
      return;
    }
    this.renderRecent();
  }

  /**
   * The turns holding every word of the search (words of three characters or more; the
   * index is of three-character pieces), in this scope's project when there is one.
   * @param {string} search
   * @returns {Promise<SearchHit[]>}
   */
  async searchMessages(search) {
    const words = search.split(/\s+/).filter(Boolean);
    if (!words.length || words.some((word) => word.length < 3)) return [];
    /** @type {import('../../protocol').SearchQueryParams} */
    const params = { query: search, limit: 20 };
    if (this.scope) params.projectId = this.scope;
    const page = await this.rpc.call('search/query', params);
    return page.hits;
  }

  /**
   * A found turn: its chat opened, scrolled to the turn and the turn marked.
   * @param {SearchHit} hit
   */
  async openHit(hit) {
    this.openSession(hit.session);
    const tab = this.tabs.get(hit.session);
    if (!tab) return;
    if (tab.chatUri !== hit.chat) tab.showChat(hit.chat);
    // The chat's first page arrives with its subscription; older turns load as needed.
    const deadline = Date.now() + 5000;
    while (!tab.chat && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    if (!(await tab.revealTurn(hit.turnId))) this.showBanner('That turn could not be shown.', 'warn');
  }

  /** @param {SearchHit} hit */
  messageRow(hit) {
    return el('li', { class: 'recent message-hit', dataset: { session: hit.session, turn: hit.turnId } },
      el('button', { class: 'recent-open', type: 'button', onclick: () => this.openHit(hit) },
        el('span', { class: 'recent-title' }, hit.title || 'New chat'),
        el('span', { class: 'recent-meta' }, `turn ${hit.index} · ${when(hit.startedAt)}`),
        el('span', { class: 'hit-snippet' }, ...hit.snippet.map((piece) => (piece.match ? el('mark', null, piece.text) : piece.text))),
      ),
    );
  }

  /** The next page of the list shown (all chats, or those the search found). */
  async loadMore() {
    const searching = Boolean(this.search);
    const cursor = searching ? this.foundCursor : this.recentCursor;
    if (!cursor || this.loadingMore) return;
    this.loadingMore = true;
    const search = this.search;
    try {
      /** @type {import('../../protocol').SessionListParams} */
      const params = searching ? this.listParams(cursor) : this.recentParams(cursor);
      if (searching) params.titleContains = search;
      const page = await this.rpc.call('session/list', params);
      if (search !== this.search) return;
      const known = new Set((searching ? this.found : this.recent).map((session) => session.uri));
      const fresh = page.sessions.filter((session) => !known.has(session.uri));
      if (searching) {
        this.found = [...this.found, ...fresh];
        this.foundCursor = page.nextCursor ?? null;
      } else {
        this.recent = [...this.recent, ...fresh];
        this.recentCursor = page.nextCursor ?? null;
      }
    } catch (error) {
      this.showBanner(`Could not list more chats: ${message(error)}`, 'warn');
      return;
    } finally {
      this.loadingMore = false;
    }
    this.renderRecent();
  }

  async loadProjects() {
    try {
      this.projects = (await this.rpc.call('project/list', {})).projects;
    } catch {
      this.projects = [];
    }
    this.renderScope();
  }

  async countPending() {
    try {
      const page = await this.rpc.call('proposal/list', { statuses: ['pending'], limit: 100 });
      const count = page.proposals.length;
      this.pendingBadge.textContent = String(count);
      this.pendingBadge.hidden = count === 0;
      this.pendingBadge.setAttribute('aria-label', `${count} waiting`);
    } catch {
      this.pendingBadge.hidden = true;
    }
  }

  /** @param {SessionSummary} session */
  inScope(session) {
    const project = session.scope.type === 'project' ? session.scope.projectId : null;
    return project === this.scope;
  }

  renderRecent() {
    const search = this.search;
    const matches = (/** @type {SessionSummary} */ session) => Boolean(session.title && session.title.toLowerCase().includes(search));
    // While searching, what the server found, with chats that came to match since.
    const listed = search
      ? [...this.recent.filter((session) => matches(session) && !this.found.some((found) => found.uri === session.uri)), ...this.found]
      : [...this.pinned, ...this.recent];
    const sessions = listed.filter((session) => this.inScope(session) && (!search || matches(session)));
    const cursor = search ? this.foundCursor : this.recentCursor;
    this.moreButton.hidden = !cursor;
    const messages = search && this.messageHits.length
      ? [el('li', { class: 'shelf-note' }, 'In messages'), ...this.messageHits.map((hit) => this.messageRow(hit))]
      : [];
    if (!sessions.length) {
      replace(this.recentList, el('li', { class: 'muted empty' }, search ? 'No chat title matches.' : this.archivedView ? 'No archived chats.' : 'No chats yet.'), ...messages);
      return;
    }
    replace(this.recentList, ...sessions.map((session) => this.recentRow(session)), cursor ? this.moreRow : null, ...messages);
  }

  /** @param {SessionSummary} session */
  recentRow(session) {
    const open = this.tabs.has(session.uri);
    const active = session.uri === this.active;
    return el('li', { class: `recent${open ? ' open' : ''}${active ? ' active' : ''}`, dataset: { session: session.uri } },
      el('button', { class: 'recent-open', type: 'button', 'aria-current': active ? 'true' : false, onclick: () => this.openSession(session.uri) },
        el('span', { class: 'recent-title' }, session.title || 'New chat'),
        el('span', { class: 'recent-meta' }, `${session.harness} · ${when(session.updatedAt)}`),
      ),
      el('button', { class: 'button subtle small', type: 'button', 'aria-label': `Rename ${session.title || 'New chat'}`, title: 'Rename', onclick: () => this.rename(session) }, icon('edit')),
      session.archived ? null : el('button', {
        class: `button subtle small pin${session.pinned ? ' on' : ''}`,
        type: 'button',
        'aria-pressed': String(Boolean(session.pinned)),
        'aria-label': `Pin ${session.title || 'New chat'}`,
        title: session.pinned ? 'Unpin' : 'Pin to the top',
        onclick: () => this.mark(session, { pinned: !session.pinned }),
      }, icon('pin')),
      el('button', {
        class: 'button subtle small archive',
        type: 'button',
        'aria-label': `${session.archived ? 'Unarchive' : 'Archive'} ${session.title || 'New chat'}`,
        title: session.archived ? 'Back to recent chats' : 'Archive: kept and searchable, out of this list',
        onclick: () => this.mark(session, session.archived ? { archived: false } : { archived: true, pinned: false }),
      }, icon('archive')),
      el('button', { class: 'button subtle small', type: 'button', 'aria-label': `Delete ${session.title || 'New chat'}`, title: 'Delete', onclick: () => this.remove(session) }, icon('trash')),
    );
  }

  /**
   * Pins, unpins, archives or unarchives a session.
   * @param {SessionSummary} session
   * @param {{ pinned?: boolean, archived?: boolean }} marks
   */
  async mark(session, marks) {
    try {
      const answer = await this.rpc.call('session/mark', { session: session.uri, ...marks });
      this.place(answer.summary);
      this.renderRecent();
    } catch (error) {
      this.showBanner(`Could not change the chat: ${message(error)}`, 'warn');
    }
  }

  /** @param {SessionSummary} session */
  async rename(session) {
    const title = await promptDialog('New name of the chat', session.title || '');
    if (title === null || !title.trim()) return;
    try {
      const answer = await this.rpc.call('session/rename', { session: session.uri, title: title.trim() });
      this.place(answer.summary);
      this.renderRecent();
    } catch (error) {
      this.showBanner(`Could not rename: ${message(error)}`, 'warn');
    }
  }

  /** @param {SessionSummary} session */
  async remove(session) {
    const sure = await confirmDialog(`Move “${session.title || 'New chat'}” and all its chats to the trash? It can be restored from Trash until the trash is emptied.`, 'Move to trash');
    if (!sure) return;
    try {
      await this.rpc.call('session/dispose', { session: session.uri });
      const tab = this.tabs.get(session.uri);
      if (tab) this.dropTab(tab);
      this.recent = this.recent.filter((s) => s.uri !== session.uri);
      this.pinned = this.pinned.filter((s) => s.uri !== session.uri);
      this.found = this.found.filter((s) => s.uri !== session.uri);
      this.renderRecent();
    } catch (error) {
      this.showBanner(`Could not delete: ${message(error)}`, 'warn');
    }
  }

  renderScope() {
    const project = this.projects.find((p) => p.id === this.scope);
    if (!this.scope || !project) {
      this.scopeBox.hidden = true;
      return;
    }
    this.scopeBox.hidden = false;
    replace(this.scopeBox,
      el('span', { class: 'muted' }, 'Project'),
      el('a', { href: `#/project/${encodeURIComponent(project.id)}`, class: 'scope-name' }, project.name),
      el('button', { class: 'button subtle small', type: 'button', onclick: () => this.enterProject(null) }, 'Leave'),
    );
  }

  /** @param {string | null} projectId */
  async enterProject(projectId) {
    // A project.md changed since the user trusted it is shown before anything starts in it.
    if (projectId) {
      try {
        if (!(await trustBeforeEntering(this.rpc, projectId))) return;
      } catch (error) {
        this.showBanner(`Could not enter the project: ${message(error)}`, 'warn');
        return;
      }
      await this.loadProjects();
    }
    this.scope = projectId;
    this.renderScope();
    this.renderTabs();
    await this.loadRecent();
    const visible = [...this.tabs.values()].filter((tab) => this.tabInScope(tab));
    if (!visible.some((tab) => tab.uri === this.active)) {
      if (visible.length) this.show(visible[visible.length - 1].uri);
      else await this.newChat();
    }
    location.hash = '#/';
  }

  /** @param {SessionTab} tab */
  tabInScope(tab) {
    if (!tab.session) return !this.scope || tab.projectHint === this.scope;
    return this.inScope(tab.session.summary);
  }

  async restoreTabs() {
    /** @type {string[]} */
    let saved = [];
    try {
      saved = JSON.parse(localStorage.getItem(TABS_KEY) || '[]');
    } catch {
      saved = [];
    }
    const active = localStorage.getItem(`${TABS_KEY}.active`);
    for (const uri of saved) this.addTab(uri);
    const inScope = [...this.tabs.values()].filter((tab) => this.tabInScope(tab));
    if (active && this.tabs.has(active)) this.show(active);
    else if (inScope.length) this.show(inScope[0].uri);
    else await this.newChat();
  }

  saveTabs() {
    localStorage.setItem(TABS_KEY, JSON.stringify([...this.tabs.keys()]));
    if (this.active) localStorage.setItem(`${TABS_KEY}.active`, this.active);
  }

  /** @param {string} uri */
  addTab(uri) {
    let tab = this.tabs.get(uri);
    if (tab) return tab;
    tab = new SessionTab(
      {
        rpc: this.rpc,
        harnessOf: (id) => this.harnessOf(id),
        harnesses: () => this.harnesses(),
        changed: (changed) => this.tabChanged(changed),
        openSession: (session) => this.openSession(session),
        switchHarness: (from, provider) => this.switchHarness(from, provider),
        announce: (text) => {
          this.announcer.textContent = text;
        },
      },
      uri,
    );
    this.tabs.set(uri, tab);
    this.views.append(tab.element);
    this.saveTabs();
    this.renderTabs();
    return tab;
  }

  /** @param {string} uri */
  openSession(uri) {
    const known = this.recent.find((session) => session.uri === uri);
    if (known && !this.inScope(known)) {
      this.scope = known.scope.type === 'project' ? known.scope.projectId : null;
      this.renderScope();
      this.loadRecent();
    }
    this.addTab(uri);
    this.show(uri);
    location.hash = '#/';
  }

  /** @param {string} uri */
  show(uri) {
    this.active = uri;
    for (const [key, tab] of this.tabs) tab.setVisible(key === uri);
    this.saveTabs();
    this.renderTabs();
    this.renderRecent();
    const tab = this.tabs.get(uri);
    if (tab && this.routeName() === 'home') tab.textarea.focus({ preventScroll: true });
  }

  /**
   * Shows a landing to start a chat on: an unused one already open in this scope, else
   * an unused one the server keeps, else a new session. Empty sessions are reused, never
   * stacked (several calls at once share one answer).
   */
  async newChat() {
    if (!this.landingPending) {
      this.landingPending = this.findOrMakeLanding().finally(() => {
        this.landingPending = null;
      });
    }
    const uri = await this.landingPending;
    if (!uri) return;
    this.show(uri);
    location.hash = '#/';
    const tab = this.tabs.get(uri);
    if (tab) tab.textarea.focus({ preventScroll: true });
  }

  /** @returns {Promise<string | null>} the landing's session */
  async findOrMakeLanding() {
    const open = [...this.tabs.values()].find((tab) => this.tabInScope(tab) && isUnused(tab.facts()));
    if (open) return open.uri;
    const scope = this.scope;
    try {
      const kept = await this.unusedOnServer();
      if (kept && scope === this.scope) {
        const tab = this.addTab(kept);
        tab.projectHint = scope;
        return kept;
      }
    } catch (error) {
      // Looking for one to reuse is a saving, not a need: a new session still does.
      console.warn(`looking for an empty chat to reuse: ${message(error)}`);
    }
    const harness = this.harnesses().find((h) => h.id === this.rpc.server?.defaultHarness) || this.harnesses()[0];
    const project = this.projects.find((p) => p.id === scope);
    /** @type {import('../../protocol').SessionCreateParams} */
    const params = {};
    if (project?.agent || project?.provider) params.harness = project.agent || project.provider || undefined;
    else if (harness) params.harness = harness.id;
    if (scope) params.projectId = scope;
    try {
      const created = await this.rpc.call('session/create', params);
      const tab = this.addTab(created.session.summary.uri);
      tab.projectHint = scope;
      return created.session.summary.uri;
    } catch (error) {
      this.showBanner(`Could not start a chat: ${message(error)}`, 'warn');
      return null;
    }
  }

  /**
   * An untitled session of this scope, not open here, with one chat holding no turn, no
   * draft and no queue (one a reload or another window left), if the newest ones hold one.
   * @returns {Promise<string | null>}
   */
  async unusedOnServer() {
    const page = await this.rpc.call('session/list', { ...this.listParams(null), limit: 20 });
    const candidates = page.sessions.filter((session) => !session.title && this.inScope(session) && !this.tabs.has(session.uri)).slice(0, 5);
    for (const session of candidates) {
      const chat = defaultChatOf(session.uri);
      const state = (await this.rpc.call('chat/resolve', { chat })).chat;
      const unused = isUnused({
        session: { summary: session, chats: [{ summary: state.summary, running: false }] },
        chat: state,
        olderTurns: false,
        typed: '',
      });
      if (unused) return session.uri;
    }
    return null;
  }

  /**
   * A landing session changes agent: a new session with it, carrying the draft. Only an
   * unused landing is replaced; a session with a turn or another chat keeps its agent.
   * @param {SessionTab} tab
   * @param {string} harness
   */
  async switchHarness(tab, harness) {
    const facts = tab.facts();
    // The draft moves to the new session; apart from it the session must be unused.
    const replaceable = facts.chat && isUnused({ ...facts, typed: '', chat: { ...facts.chat, draft: null } });
    if (!replaceable) {
      throw new Error('The agent of a chat is fixed once it has a message or a side chat: start a new chat to use another agent.');
    }
    /** @type {import('../../protocol').SessionCreateParams} */
    const params = { harness };
    if (this.scope) params.projectId = this.scope;
    const created = await this.rpc.call('session/create', params);
    const draft = tab.textarea.value;
    const uri = created.session.summary.uri;
    const next = this.addTab(uri);
    next.projectHint = this.scope;
    const chat = created.session.chats[0]?.summary.uri;
    if (draft && chat) {
      next.textarea.value = draft;
      next.lastLocalEdit = Date.now();
      await this.rpc.call('chat/setDraft', { chat, draft });
    }
    this.show(uri);
    // The old landing is left behind empty (its draft now lives in the new one).
    tab.textarea.value = '';
    if (tab.chatUri) await this.rpc.call('chat/setDraft', { chat: tab.chatUri, draft: null }).catch(() => {});
    if (tab.chat) tab.chat.draft = null;
    await this.closeTab(tab);
  }

  /**
   * Closes a tab. Its draft stays with its chat on the server and comes back when the
   * session is opened again; only an unused landing is deleted (nothing in it to lose).
   * Closing the last tab shows a landing.
   * @param {SessionTab} tab
   */
  async closeTab(tab) {
    const unused = isUnused(tab.facts());
    const order = this.visibleTabs().map((other) => other.uri);
    const next = afterClose(order, this.active, tab.uri);
    if (unused && !next) {
      // The last tab is already the landing a closed strip shows.
      this.show(tab.uri);
      return;
    }
    tab.close();
    this.tabs.delete(tab.uri);
    if (unused) this.rpc.call('session/dispose', { session: tab.uri }).catch(() => {});
    if (next) this.show(next);
    else {
      this.active = null;
      this.saveTabs();
      this.renderTabs();
      await this.newChat();
    }
    this.saveTabs();
    this.renderTabs();
    this.renderRecent();
  }

  /**
   * Removes the tab of a session that is gone (deleted here or elsewhere).
   * @param {SessionTab} tab
   */
  dropTab(tab) {
    const next = afterClose(this.visibleTabs().map((other) => other.uri), this.active, tab.uri);
    tab.close();
    this.tabs.delete(tab.uri);
    if (this.active === tab.uri) {
      this.active = null;
      if (next) this.show(next);
      else if (this.routeName() === 'home') this.newChat();
    }
    this.saveTabs();
    this.renderTabs();
    this.renderRecent();
  }

  /** The tabs of the scope entered, in strip order. */
  visibleTabs() {
    return [...this.tabs.values()].filter((tab) => this.tabInScope(tab));
  }

  /** @param {SessionTab} tab */
  tabChanged(tab) {
    this.renderTabs();
    if (tab.session && !this.recent.some((s) => s.uri === tab.uri) && this.inScope(tab.session.summary)) {
      this.recent = [tab.session.summary, ...this.recent];
      this.renderRecent();
    }
  }

  renderTabs() {
    const tabs = [...this.tabs.values()].filter((tab) => this.tabInScope(tab));
    replace(
      this.tabStrip,
      ...tabs.map((tab) => {
        const selected = tab.uri === this.active;
        return el('div', { class: `tab${selected ? ' active' : ''}`, dataset: { session: tab.uri } },
          el('button', {
            class: 'tab-button',
            role: 'tab',
            type: 'button',
            'aria-selected': String(selected),
            tabindex: selected ? '0' : '-1',
            onclick: () => this.show(tab.uri),
          }, tab.running() ? el('span', { class: 'dot running', role: 'img', 'aria-label': 'answering' }) : null, tab.title()),
          // Not a second control inside the tab list: keyboard users close the tab with
          // Delete on it.
          el('button', { class: 'tab-close', type: 'button', tabindex: '-1', 'aria-hidden': 'true', title: `Close ${tab.title()}`, onclick: () => this.closeTab(tab) }, icon('close')),
        );
      }),
    );
  }

  /** @param {KeyboardEvent} event */
  tabKeys(event) {
    if (event.key === 'Delete') {
      const tab = this.active ? this.tabs.get(this.active) : undefined;
      if (tab) this.closeTab(tab);
      return;
    }
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const next = stepTab(this.visibleTabs().map((tab) => tab.uri), this.active, event.key === 'ArrowRight' ? 1 : -1);
    if (!next) return;
    this.show(next);
    const button = this.tabStrip.querySelector('.tab.active .tab-button');
    if (button instanceof HTMLElement) button.focus();
  }

  /**
   * The page's keyboard shortcuts (listed by `showShortcuts`).
   * @param {KeyboardEvent} event
   */
  shortcut(event) {
    if (event.defaultPrevented || event.isComposing) return;
    const target = event.target;
    const typing = target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
    const control = event.ctrlKey || event.metaKey;
    if (document.querySelector('dialog[open]')) return;
    if (control && event.shiftKey && !event.altKey && event.key.toLowerCase() === 'o') {
      event.preventDefault();
      this.newChat();
    } else if (control && !event.shiftKey && !event.altKey && event.key.toLowerCase() === 'k') {
      event.preventDefault();
      this.searchInput.focus();
      this.searchInput.select();
    } else if (event.key === 'Escape' && !control && !event.altKey) {
      const tab = this.active ? this.tabs.get(this.active) : undefined;
      if (tab && this.routeName() === 'home' && tab.running()) {
        event.preventDefault();
        tab.stop();
        this.announcer.textContent = 'Stopping the answer';
      }
    } else if (event.altKey && !control && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
      const next = stepTab(this.visibleTabs().map((tab) => tab.uri), this.active, event.key === 'ArrowDown' ? 1 : -1);
      if (!next) return;
      event.preventDefault();
      if (this.routeName() !== 'home') location.hash = '#/';
      this.show(next);
    } else if (event.key === '?' && !typing && !control && !event.altKey) {
      event.preventDefault();
      this.showShortcuts();
    }
  }

  /** The keyboard shortcuts, in a dialog. */
  showShortcuts() {
    const dialog = el('dialog', { class: 'dialog shortcuts', 'aria-labelledby': 'shortcuts-title' },
      el('h2', { id: 'shortcuts-title' }, 'Keyboard shortcuts'),
      el('dl', { class: 'shortcut-list' },
        ...SHORTCUTS.flatMap(([keys, what]) => [el('dt', null, el('kbd', null, keys)), el('dd', null, what)])),
      el('p', { class: 'muted' }, 'On a Mac, ⌘ works where Ctrl is written. In the tab strip, ← and → move between open chats.'),
      el('form', { method: 'dialog', class: 'dialog-actions' }, el('button', { class: 'button primary', value: 'ok' }, 'Close')),
    );
    const opener = document.activeElement;
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (opener instanceof HTMLElement) opener.focus();
    });
    document.body.append(dialog);
    dialog.showModal();
  }

  /**
   * The chat the calendar's Ask bar talks to: the one "Calendar" session of the global
   * scope, made the first time and reused after (found by its title).
   * @returns {Promise<{ session: string, chat: string }>}
   */
  async calendarChat() {
    const page = await this.rpc.call('session/list', { scope: { type: 'global' }, titleContains: CALENDAR_TITLE, limit: 50 });
    let session = page.sessions.find((candidate) => candidate.title === CALENDAR_TITLE)?.uri;
    if (!session) {
      const created = await this.rpc.call('session/create', { title: CALENDAR_TITLE });
      session = created.session.summary.uri;
    }
    return { session, chat: defaultChatOf(session) };
  }

  /** @param {SessionTab} tab */
  fillLanding(tab) {
    const shelves = tab.landingShelves;
    const projects = el('section', { class: 'shelf', 'aria-label': 'Projects' },
      el('h2', { class: 'shelf-title' }, 'Projects'),
      this.projects.length
        ? el('ul', { class: 'shelf-list' }, ...this.projects.slice(0, 6).map((project) =>
            el('li', null, el('button', { class: 'shelf-item', type: 'button', onclick: () => this.enterProject(project.id) },
              el('strong', null, project.name), el('span', { class: 'muted' }, project.description || project.folder)))))
        : el('p', { class: 'muted' }, 'No projects yet: ', el('code', null, 'hearth projects new NAME --source FILE'), ' makes one.'),
    );
    const chats = this.recent.filter((session) => this.inScope(session) && session.uri !== tab.uri && session.title).slice(0, 6);
    const recent = el('section', { class: 'shelf', 'aria-label': 'Recent chats' },
      el('h2', { class: 'shelf-title' }, 'Recent chats'),
      chats.length
        ? el('ul', { class: 'shelf-list' }, ...chats.map((session) =>
            el('li', null, el('button', { class: 'shelf-item', type: 'button', onclick: () => this.openSession(session.uri) },
              el('strong', null, session.title || 'New chat'), el('span', { class: 'muted' }, `${session.harness} · ${when(session.updatedAt)}`)))))
        : el('p', { class: 'muted' }, 'Your conversations will be listed here.'),
    );
    replace(shelves, this.scope ? null : projects, recent);
  }

  routeName() {
    const hash = location.hash.replace(/^#\/?/, '');
    return hash.split('/')[0] || 'home';
  }

  route() {
    const hash = location.hash.replace(/^#\/?/, '');
    const [name, ...rest] = hash.split('/');
    const route = name || 'home';
    for (const link of this.nav.querySelectorAll('a')) {
      const current = link.dataset.route === `#/${route === 'home' ? '' : route}`;
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    if (this.page?.leave) this.page.leave();
    this.page = null;
    const connected = document.body.dataset.connection !== 'login';
    this.home.hidden = route !== 'home' || !connected;
    this.pageHost.hidden = route === 'home' || !connected;
    if (route === 'home') {
      const active = this.active ? this.tabs.get(this.active) : undefined;
      if (active) active.setVisible(true);
      return;
    }
    const context = { rpc: this.rpc, app: this };
    switch (route) {
      case 'calendar':
        this.page = new CalendarPage(context, this.pageHost);
        break;
      case 'proposals':
        this.page = new ProposalsPage(context, this.pageHost);
        break;
      case 'audit':
        this.page = new AuditPage(context, this.pageHost);
        break;
      case 'setup':
        this.page = rest[0] === 'provider' ? new ProviderSetupPage(context, this.pageHost) : new SetupPage(context, this.pageHost);
        break;
      case 'trash':
        this.page = new TrashPage(context, this.pageHost);
        break;
      case 'projects':
        this.page = new ProjectsPage(context, this.pageHost, null);
        break;
      case 'project':
        this.page = rest.length > 1 && rest[rest.length - 1] === 'settings'
          ? new ProjectSettingsPage(context, this.pageHost, decodeURIComponent(rest.slice(0, -1).join('/')))
          : new ProjectsPage(context, this.pageHost, decodeURIComponent(rest.join('/')));
        break;
      default:
        replace(this.pageHost, el('h1', null, 'Not found'), el('p', null, 'No such page. '), el('a', { href: '#/' }, 'Back to chats'));
        return;
    }
    this.page.render();
  }

  /**
   * The theme chosen with the switch, else the system's (followed as it changes).
   * @param {string | null} theme
   */
  applyTheme(theme) {
    const system = matchMedia('(prefers-color-scheme: dark)');
    const pick = () => {
      const chosen = localStorage.getItem(THEME_KEY);
      document.documentElement.dataset.theme = chosen === 'light' || chosen === 'dark' ? chosen : system.matches ? 'dark' : 'light';
    };
    if (!this.followingSystem) {
      this.followingSystem = true;
      system.addEventListener('change', pick);
    }
    if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
    else pick();
  }

  toggleTheme() {
    const dark = document.documentElement.dataset.theme === 'dark';
    const next = dark ? 'light' : 'dark';
    localStorage.setItem(THEME_KEY, next);
    this.applyTheme(next);
  }
}

// For the end-to-end tests and the curious: the app, on the window.
// @ts-ignore
window.hearth = new App();
