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

/** @typedef {import('../../protocol').SessionSummary} SessionSummary */
/** @typedef {import('../../protocol').HarnessInfo} HarnessInfo */
/** @typedef {import('../../protocol').Project} Project */

const TABS_KEY = 'hearth.tabs';
const THEME_KEY = 'hearth.theme';

class App {
  constructor() {
    this.rpc = new Rpc((status, detail) => this.status(status, detail));
    /** @type {Map<string, SessionTab>} */
    this.tabs = new Map();
    /** @type {string | null} */
    this.active = null;
    /** @type {SessionSummary[]} */
    this.recent = [];
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
      placeholder: 'Search chats',
      'aria-label': 'Search recent chats',
      oninput: () => {
        this.search = this.searchInput.value.trim().toLowerCase();
        this.renderRecent();
      },
    });
    this.recentList = el('ul', { class: 'recent-list', 'aria-label': 'Recent chats' });
    this.scopeBox = el('div', { class: 'scope', hidden: true });
    this.pendingBadge = el('span', { class: 'badge count', hidden: true });
    this.nav = el('nav', { class: 'places', 'aria-label': 'Places' },
      this.link('#/', 'Chats'),
      this.link('#/projects', 'Projects'),
      this.link('#/calendar', 'Calendar'),
      this.link('#/proposals', 'Proposals', this.pendingBadge),
      this.link('#/audit', 'Audit log'),
      this.link('#/setup', 'Setup'),
    );
    const sidebar = el('aside', { class: 'sidebar', id: 'sidebar', 'aria-label': 'Hearth' },
      el('div', { class: 'brand' },
        el('img', { src: '/favicon.svg', alt: '', width: 22, height: 22 }),
        el('span', null, 'Hearth'),
        el('button', { class: 'button subtle small theme', type: 'button', 'aria-label': 'Switch light or dark', onclick: () => this.toggleTheme() }, icon('theme')),
      ),
      el('button', { class: 'button primary new-chat', type: 'button', onclick: () => this.newChat() }, icon('plus'), 'New chat'),
      this.scopeBox,
      this.nav,
      el('h2', { class: 'shelf-title' }, 'Recent chats'),
      this.searchInput,
      this.recentList,
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
    }
    if (detail) console.warn(detail);
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
          this.recent = [action.summary, ...this.recent.filter((s) => s.uri !== action.summary.uri)];
          this.renderRecent();
        } else if (action.type === 'proposalChanged') {
          // The badge and the page on view follow the server, not a timer.
          this.countPending();
          this.page?.proposalChanged?.();
        } else if (action.type === 'sessionRemoved') {
          this.recent = this.recent.filter((s) => s.uri !== action.session);
          this.renderRecent();
          const tab = this.tabs.get(action.session);
          if (tab) this.closeTab(tab, false);
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

  async loadRecent() {
    try {
      /** @type {import('../../protocol').SessionListParams} */
      const params = { limit: 100 };
      if (this.scope) params.scope = { type: 'project', projectId: this.scope };
      const page = await this.rpc.call('session/list', params);
      this.recent = page.sessions;
    } catch (error) {
      this.recent = [];
      replace(this.recentList, el('li', { class: 'notice error' }, `Could not list the chats: ${message(error)}`));
      return;
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
    const sessions = this.recent
      .filter((session) => this.inScope(session))
      .filter((session) => !this.search || (session.title || 'New chat').toLowerCase().includes(this.search) || (session.harness ?? '').includes(this.search));
    if (!sessions.length) {
      replace(this.recentList, el('li', { class: 'muted empty' }, this.search ? 'No chat matches.' : 'No chats yet.'));
      return;
    }
    replace(this.recentList, ...sessions.slice(0, 60).map((session) => this.recentRow(session)));
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
      el('button', { class: 'button subtle small', type: 'button', 'aria-label': `Delete ${session.title || 'New chat'}`, title: 'Delete', onclick: () => this.remove(session) }, icon('trash')),
    );
  }

  /** @param {SessionSummary} session */
  async rename(session) {
    const title = await promptDialog('New name of the chat', session.title || '');
    if (title === null || !title.trim()) return;
    try {
      const answer = await this.rpc.call('session/rename', { session: session.uri, title: title.trim() });
      this.recent = this.recent.map((s) => (s.uri === session.uri ? answer.summary : s));
      this.renderRecent();
    } catch (error) {
      this.showBanner(`Could not rename: ${message(error)}`, 'warn');
    }
  }

  /** @param {SessionSummary} session */
  async remove(session) {
    const sure = await confirmDialog(`Delete “${session.title || 'New chat'}” and all its chats? This cannot be undone.`, 'Delete');
    if (!sure) return;
    try {
      await this.rpc.call('session/dispose', { session: session.uri });
      const tab = this.tabs.get(session.uri);
      if (tab) this.closeTab(tab, false);
      this.recent = this.recent.filter((s) => s.uri !== session.uri);
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
      else if (projectId) await this.newChat();
      else this.active = null;
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
    if (active && this.tabs.has(active)) this.show(active);
    else if (this.tabs.size) this.show([...this.tabs.keys()][0]);
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

  async newChat() {
    const harness = this.harnesses().find((h) => h.id === this.rpc.server?.defaultHarness) || this.harnesses()[0];
    const project = this.projects.find((p) => p.id === this.scope);
    /** @type {import('../../protocol').SessionCreateParams} */
    const params = {};
    if (project?.agent || project?.provider) params.harness = project.agent || project.provider || undefined;
    else if (harness) params.harness = harness.id;
    if (this.scope) params.projectId = this.scope;
    try {
      const created = await this.rpc.call('session/create', params);
      const tab = this.addTab(created.session.summary.uri);
      tab.projectHint = this.scope;
      this.show(created.session.summary.uri);
      location.hash = '#/';
    } catch (error) {
      this.showBanner(`Could not start a chat: ${message(error)}`, 'warn');
    }
  }

  /**
   * A landing session changes agent: a new session with it, carrying the draft.
   * @param {SessionTab} tab
   * @param {string} harness
   */
  async switchHarness(tab, harness) {
    /** @type {import('../../protocol').SessionCreateParams} */
    const params = { harness };
    if (this.scope) params.projectId = this.scope;
    const created = await this.rpc.call('session/create', params);
    const draft = tab.textarea.value;
    const uri = created.session.summary.uri;
    const next = this.addTab(uri);
    const chat = created.session.chats[0]?.summary.uri;
    if (draft && chat) {
      next.textarea.value = draft;
      next.lastLocalEdit = Date.now();
      await this.rpc.call('chat/setDraft', { chat, draft });
    }
    this.show(uri);
    await this.closeTab(tab, true);
  }

  /**
   * Closes a tab; an empty session is deleted, a draft pruned.
   * @param {SessionTab} tab
   * @param {boolean} prune
   */
  async closeTab(tab, prune) {
    const empty = tab.chat && tab.chat.turns.length === 0 && !tab.olderTurns && !tab.textarea.value.trim();
    tab.close(prune);
    this.tabs.delete(tab.uri);
    if (prune && empty) this.rpc.call('session/dispose', { session: tab.uri }).catch(() => {});
    if (this.active === tab.uri) {
      const rest = [...this.tabs.values()].filter((other) => this.tabInScope(other));
      this.active = null;
      if (rest.length) this.show(rest[rest.length - 1].uri);
    }
    this.saveTabs();
    this.renderTabs();
    this.renderRecent();
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
          el('button', { class: 'tab-close', type: 'button', tabindex: '-1', 'aria-hidden': 'true', title: `Close ${tab.title()}`, onclick: () => this.closeTab(tab, true) }, icon('close')),
        );
      }),
    );
  }

  /** @param {KeyboardEvent} event */
  tabKeys(event) {
    if (event.key === 'Delete') {
      const tab = this.active ? this.tabs.get(this.active) : undefined;
      if (tab) this.closeTab(tab, true);
      return;
    }
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const tabs = [...this.tabs.values()].filter((tab) => this.tabInScope(tab));
    const index = tabs.findIndex((tab) => tab.uri === this.active);
    if (index < 0) return;
    const next = tabs[(index + (event.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
    this.show(next.uri);
    const button = this.tabStrip.querySelector('.tab.active .tab-button');
    if (button instanceof HTMLElement) button.focus();
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
        this.page = new SetupPage(context, this.pageHost);
        break;
      case 'projects':
        this.page = new ProjectsPage(context, this.pageHost, null);
        break;
      case 'project':
        this.page = new ProjectsPage(context, this.pageHost, decodeURIComponent(rest.join('/')));
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
