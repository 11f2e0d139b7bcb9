// @ts-check
// The pages beside the conversations: proposals, the audit log, setup and projects.

import { el, replace, when, message, returnFocus } from './dom.js';
import { proposalCard } from './conversation.js';
import { icon } from './icons.js';
import { projectStateLine, settingsHref } from './project_settings.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */
/** @typedef {{rpc: Rpc, app: any}} PageContext */
/** @typedef {import('../../protocol').Proposal} Proposal */
/** @typedef {import('../../protocol').AuditEntry} AuditEntry */
/** @typedef {import('../../protocol').ProjectReview} ProjectReview */
/** @typedef {import('../../protocol').Project} Project */

export class ProposalsPage {
  /**
   * @param {PageContext} context
   * @param {HTMLElement} host
   */
  constructor(context, host) {
    this.rpc = context.rpc;
    this.app = context.app;
    this.host = host;
    this.showAll = false;
    this.list = el('div', { class: 'cards', 'aria-live': 'polite' });
    // Reads that overlap: only the newest one draws.
    this.generation = 0;
  }

  render() {
    const toggle = el('label', { class: 'toggle' },
      el('input', { type: 'checkbox', checked: this.showAll, onchange: (/** @type {Event} */ event) => {
        this.showAll = /** @type {HTMLInputElement} */ (event.target).checked;
        this.load();
      } }),
      ' Show decided proposals too',
    );
    replace(this.host,
      el('header', { class: 'page-header' }, el('h1', null, 'Proposals'), toggle),
      el('p', { class: 'muted' }, 'Changes agents asked for. Nothing is written until you approve it; your approval binds to exactly the change shown.'),
      this.list,
    );
    this.load();
  }

  /** The server says a proposal was staged or decided: read them again, in place. */
  proposalChanged() {
    this.load();
  }

  async load() {
    const generation = ++this.generation;
    /** @type {import('../../protocol').ProposalListParams} */
    const params = { limit: 100 };
    if (!this.showAll) params.statuses = ['pending'];
    let proposals;
    /** @type {Proposal[]} */
    let standing;
    try {
      [proposals, standing] = await Promise.all([
        this.rpc.call('proposal/list', params).then((page) => page.proposals),
        // What would make a pending change a repeat: the same change waiting or done.
        this.rpc.call('proposal/list', { statuses: ['pending', 'approved', 'applying', 'applied'], limit: 500 }).then((page) => page.proposals),
      ]);
    } catch (error) {
      replace(this.list, el('div', { class: 'notice error', role: 'alert' }, `Could not read the proposals: ${message(error)}`));
      return;
    }
    if (generation !== this.generation) return;
    if (!proposals.length) {
      replace(this.list, el('p', { class: 'empty' }, this.showAll ? 'No proposals yet.' : 'Nothing waiting for you.'));
      return;
    }
    const shown = new Map([...this.list.querySelectorAll(':scope > [data-proposal]')].map((card) => [/** @type {HTMLElement} */ (card).dataset.proposal, /** @type {HTMLElement} */ (card)]));
    // Cards that did not change stay the very same nodes: the focus, a half-read diff's
    // scroll and a message on a card survive the update.
    reconcile(this.list, proposals.map((proposal) => {
      const existing = shown.get(proposal.id);
      const version = `${proposal.status}:${proposal.updatedAt}:${repeatsOf(proposal, standing).length}`;
      if (existing && (existing.dataset.version === version || existing.querySelector('button:disabled, .card-error:not([hidden])'))) return existing;
      const card = proposalCard(this.rpc, proposal.id, proposal.summary, proposal, () => {
        this.load();
        this.app.countPending();
      });
      card.dataset.version = version;
      const meta = el('p', { class: 'muted' }, `${when(proposal.createdAt)} · `, el('a', { href: '#/', onclick: (/** @type {Event} */ event) => {
        event.preventDefault();
        this.app.openSession(proposal.session);
      } }, 'open the conversation'));
      card.prepend(meta);
      const repeats = proposal.status === 'pending' ? repeatsOf(proposal, standing) : [];
      if (repeats.length) meta.after(repeatWarning(repeats));
      return card;
    }));
  }

  leave() {
    this.generation += 1;
  }
}

/**
 * The other proposals, waiting or done, that make exactly the same change.
 * @param {Proposal} proposal
 * @param {Proposal[]} standing
 */
export function repeatsOf(proposal, standing) {
  return standing.filter((other) => other.id !== proposal.id && other.tool === proposal.tool && other.summary === proposal.summary);
}

/** @param {Proposal[]} repeats */
function repeatWarning(repeats) {
  const applied = repeats.filter((other) => other.status !== 'pending');
  const text = applied.length
    ? `The same change was already approved ${when(applied[0].decidedAt || applied[0].updatedAt)}: approving this one too would make it twice.`
    : `The same change is waiting in ${repeats.length === 1 ? 'another proposal' : `${repeats.length} other proposals`}: approve only one of them.`;
  return el('p', { class: 'notice warn repeat', role: 'note' }, icon('warn'), ' ', text);
}

/**
 * Makes `parent`'s children exactly `nodes`, in order, moving no node that is already in
 * place relative to the others (a moved node would lose the focus).
 * @param {Element} parent
 * @param {Element[]} nodes
 */
export function reconcile(parent, nodes) {
  const wanted = new Set(nodes);
  for (const child of [...parent.children]) {
    if (!wanted.has(child)) child.remove();
  }
  nodes.forEach((node, index) => {
    const current = parent.children[index];
    if (current !== node) parent.insertBefore(node, current || null);
  });
}

export class AuditPage {
  /**
   * @param {PageContext} context
   * @param {HTMLElement} host
   */
  constructor(context, host) {
    this.rpc = context.rpc;
    this.app = context.app;
    this.host = host;
    /** @type {AuditEntry[]} */
    this.entries = [];
    /** @type {string | undefined} */
    this.cursor = undefined;
    this.actor = el('input', { class: 'input', type: 'search', placeholder: 'actor', 'aria-label': 'Filter by actor' });
    this.tool = el('input', { class: 'input', type: 'search', placeholder: 'tool', 'aria-label': 'Filter by tool' });
    this.table = el('tbody');
    this.more = el('button', { class: 'button', type: 'button', hidden: true, onclick: () => this.load(false) }, 'Load more');
    this.verdict = el('div', { class: 'verdict', role: 'status' });
  }

  render() {
    const filter = el('form', { class: 'filters', onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault();
      this.load(true);
    } }, this.actor, this.tool, el('button', { class: 'button', type: 'submit' }, 'Filter'));
    replace(this.host,
      el('header', { class: 'page-header' }, el('h1', null, 'Audit log'),
        el('div', { class: 'actions' },
          el('button', { class: 'button', type: 'button', onclick: () => this.verify() }, 'Verify'),
          el('button', { class: 'button', type: 'button', onclick: () => this.export() }, 'Export'),
        ),
      ),
      el('p', { class: 'muted' }, 'Every tool call, decision and fetch, each sealed to the one before it.'),
      this.verdict,
      filter,
      el('div', { class: 'table-wrap', role: 'region', tabindex: '0', 'aria-label': 'Audit entries' }, el('table', { class: 'audit' },
        el('thead', null, el('tr', null, ...['#', 'When', 'Actor', 'Kind', 'Tool', 'Decision', 'Outcome'].map((h) => el('th', { scope: 'col' }, h)))),
        this.table,
      )),
      this.more,
    );
    this.load(true);
  }

  /** @param {AuditListFilter} [base] */
  params(base) {
    /** @type {import('../../protocol').AuditListParams} */
    const params = { limit: 100, ...(base || {}) };
    if (this.actor.value.trim()) params.actor = this.actor.value.trim();
    if (this.tool.value.trim()) params.tool = this.tool.value.trim();
    return params;
  }

  /** @param {boolean} fresh */
  async load(fresh) {
    if (fresh) {
      this.entries = [];
      this.cursor = undefined;
    }
    try {
      const page = await this.rpc.call('audit/list', this.params(this.cursor ? { cursor: this.cursor } : {}));
      this.entries.push(...page.entries);
      this.cursor = page.nextCursor ?? undefined;
    } catch (error) {
      replace(this.table, el('tr', null, el('td', { colSpan: 7, class: 'notice error' }, `Could not read the audit log: ${message(error)}`)));
      return;
    }
    this.more.hidden = !this.cursor;
    if (!this.entries.length) {
      replace(this.table, el('tr', null, el('td', { colSpan: 7, class: 'empty' }, 'No entries.')));
      return;
    }
    replace(this.table, ...this.entries.map((entry) => el('tr', null,
      el('td', null, String(entry.seq)),
      el('td', null, when(entry.recordedAt)),
      el('td', { class: 'actor' }, this.actorLabel(entry.actor)),
      el('td', null, entry.kind),
      el('td', null, entry.tool || ''),
      el('td', null, entry.decision),
      el('td', null, entry.outcome),
    )));
  }

  /**
   * Who acted, for people: a chat by its session's title (its URI in the tooltip).
   * @param {string} actor
   */
  actorLabel(actor) {
    const chat = /^hearth-chat:([^/]+)\/(.+)$/.exec(actor);
    if (!chat) return el('span', { title: actor }, actor === 'user' ? 'You' : actor === 'hearth' ? 'Hearth' : actor);
    const session = `hearth-session:${chat[1]}`;
    /** @type {import('../../protocol').SessionSummary | undefined} */
    const known = (this.app?.recent ?? []).find((/** @type {{uri: string}} */ summary) => summary.uri === session);
    const name = known?.title || `Chat ${chat[1].slice(0, 8)}`;
    const label = chat[2] === 'default' ? name : `${name} (${chat[2]})`;
    return el('a', { href: '#/', title: actor, onclick: (/** @type {Event} */ event) => {
      event.preventDefault();
      this.app?.openSession(session);
    } }, label);
  }

  async verify() {
    replace(this.verdict, el('p', { class: 'muted' }, 'Verifying…'));
    try {
      const answer = await this.rpc.call('audit/verify', {});
      replace(this.verdict, answer.ok
        ? el('p', { class: 'notice ok' }, `Intact: ${answer.entries} entries. Head ${answer.head || ''} — keep it somewhere safe to check against later.`)
        : el('p', { class: 'notice error', role: 'alert' }, `Verification failed: ${answer.problem || 'unknown problem'}`));
    } catch (error) {
      replace(this.verdict, el('p', { class: 'notice error', role: 'alert' }, `Could not verify: ${message(error)}`));
    }
  }

  async export() {
    /** @type {AuditEntry[]} */
    const all = [];
    /** @type {string | undefined} */
    let cursor;
    try {
      do {
        const page = await this.rpc.call('audit/list', this.params(cursor ? { cursor, limit: 500 } : { limit: 500 }));
        all.push(...page.entries);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    } catch (error) {
      replace(this.verdict, el('p', { class: 'notice error', role: 'alert' }, `Could not export: ${message(error)}`));
      return;
    }
    const blob = new Blob([all.map((entry) => JSON.stringify(entry)).join('\n') + '\n'], { type: 'application/x-ndjson' });
    const link = el('a', { href: URL.createObjectURL(blob), download: 'hearth-audit.jsonl' });
    document.body.append(link);
    link.click();
    link.remove();
    replace(this.verdict, el('p', { class: 'notice ok' }, `Exported ${all.length} entries as JSON Lines.`));
  }
}

/** @typedef {{cursor?: string, limit?: number}} AuditListFilter */

export class SetupPage {
  /**
   * @param {PageContext} context
   * @param {HTMLElement} host
   */
  constructor(context, host) {
    this.rpc = context.rpc;
    this.host = host;
  }

  render() {
    const server = this.rpc.server;
    const providers = el('div', { class: 'cards' }, el('p', { class: 'muted' }, 'Reading the providers…'));
    const agents = el('div', { class: 'cards' });
    const grants = el('div', { class: 'grants' }, el('p', { class: 'muted' }, 'Reading…'));
    replace(this.host,
      el('header', { class: 'page-header' }, el('h1', null, 'Setup')),
      el('section', { class: 'setup-section', 'aria-label': 'Server' },
        el('h2', null, 'This server'),
        el('dl', { class: 'facts' },
          el('dt', null, 'Address'), el('dd', null, el('code', null, location.origin)),
          el('dt', null, 'Version'), el('dd', null, server ? `${server.serverInfo.name} ${server.serverInfo.version}, protocol ${server.protocolVersion}` : '—'),
          el('dt', null, 'Log in elsewhere'), el('dd', null, 'Run ', el('code', null, 'hearth login'), ' and open the one-time link it prints; programs send the token from the data directory as ', el('code', null, 'Authorization: Bearer'), '.'),
        ),
      ),
      el('section', { class: 'setup-section', 'aria-label': 'Agents' },
        el('h2', null, 'Agents'),
        agents,
      ),
      el('section', { class: 'setup-section', 'aria-label': 'Standing permissions' },
        el('h2', null, 'Standing permissions'),
        el('p', { class: 'muted' }, 'Answers you gave “for this chat”: each covers exactly the call it was given for. Revoke one and the next such call asks again.'),
        grants,
      ),
      el('section', { class: 'setup-section', 'aria-label': 'Model providers' },
        el('h2', null, 'Model providers'),
        el('p', { class: 'muted' }, 'Hearth’s own agent talks to these (configured in config.toml or found from environment variables).'),
        providers,
        el('a', { class: 'button', href: '#/setup/provider' }, 'Add a provider'),
      ),
    );
    replace(agents, ...(server?.harnesses ?? []).map((harness) => {
      const result = el('div', { class: 'check', role: 'status' });
      return el('div', { class: 'card' },
        el('div', { class: 'card-title' }, el('strong', null, harness.name), harness.demo ? el('span', { class: 'badge' }, 'demo') : null),
        el('p', { class: 'muted' }, harness.description),
        el('div', { class: 'card-actions' }, el('button', { class: 'button', type: 'button', onclick: () => this.checkAgent(harness.id, result) }, 'Check')),
        result,
      );
    }));
    this.loadProviders(providers);
    this.loadGrants(grants);
  }

  /** @param {HTMLElement} target */
  async loadGrants(target) {
    try {
      const answer = await this.rpc.call('permission/grants', {});
      if (!answer.grants.length) {
        replace(target, el('p', { class: 'empty' }, 'None: every call asks, or goes by the policy in config.toml.'));
        return;
      }
      replace(target, el('ul', { class: 'grant-list' }, ...answer.grants.map((grant) => el('li', { dataset: { grant: grant.id } },
        el('span', { class: grant.allowed ? 'badge ok' : 'badge warn' }, grant.allowed ? 'Allowed' : 'Refused'),
        ' ',
        el('span', null, grant.scope),
        ' ',
        el('span', { class: 'muted' }, `in chat ${grant.chat}`),
        ' ',
        el('button', {
          class: 'button', type: 'button', 'aria-label': `Revoke: ${grant.scope}`,
          onclick: async () => {
            try {
              await this.rpc.call('permission/revokeGrant', { grant: grant.id });
              this.loadGrants(target);
            } catch (error) {
              replace(target, el('p', { class: 'notice error', role: 'alert' }, message(error)));
            }
          },
        }, 'Revoke'),
      ))));
    } catch (error) {
      replace(target, el('p', { class: 'notice error', role: 'alert' }, `Could not list the standing permissions: ${message(error)}`));
    }
  }

  /**
   * @param {string} id
   * @param {HTMLElement} result
   */
  async checkAgent(id, result) {
    replace(result, el('p', { class: 'muted' }, 'Starting…'));
    try {
      const answer = await this.rpc.call('harness/start', { harness: id });
      replace(result, el('p', { class: 'notice ok' }, `Ready: ${answer.harness.name}.`));
    } catch (error) {
      replace(result, el('p', { class: 'notice error', role: 'alert' }, message(error)));
    }
  }

  /** @param {HTMLElement} target */
  async loadProviders(target) {
    try {
      const answer = await this.rpc.call('provider/list', {});
      const cards = answer.providers.map((provider) => {
        const result = el('div', { class: 'check', role: 'status' });
        const key = provider.key.type === 'found' ? `key from ${provider.key.from}` : provider.key.type === 'missing' ? `no key: set ${provider.key.expected}` : 'no key needed';
        return el('div', { class: 'card', dataset: { provider: provider.id } },
          el('div', { class: 'card-title' }, el('strong', null, provider.id), el('span', { class: 'muted' }, ` ${provider.protocol} · ${provider.baseUrl}`)),
          el('p', { class: 'muted' }, `Base URL: ${provider.baseUrlSource}`),
          el('p', { class: provider.key.type === 'missing' ? 'notice warn' : 'muted' }, key),
          el('div', { class: 'card-actions' }, el('button', { class: 'button', type: 'button', onclick: () => this.test(provider.id, result) }, 'Test')),
          result,
        );
      });
      const problems = answer.problems.map((problem) => el('p', { class: 'notice warn' }, problem));
      replace(target, ...problems, ...(cards.length ? cards : [el('p', { class: 'empty' }, 'No model provider is configured: Hearth answers with its demo. Set OPENAI_API_KEY or ANTHROPIC_API_KEY, or add [providers.NAME] to config.toml, then restart the server.')]));
    } catch (error) {
      replace(target, el('p', { class: 'notice error', role: 'alert' }, `Could not list the providers: ${message(error)}`));
    }
  }

  /**
   * @param {string} id
   * @param {HTMLElement} result
   */
  async test(id, result) {
    replace(result, el('p', { class: 'muted' }, 'Testing…'));
    try {
      const answer = await this.rpc.call('provider/test', { provider: id });
      replace(result, ...answer.results.map((outcome) => outcome.outcome.type === 'ok'
        ? el('p', { class: 'notice ok' }, `Works (${outcome.outcome.latencyMs} ms, ${outcome.outcome.method}).`, ...outcome.outcome.notes.map((note) => el('span', { class: 'note' }, ` ${note}`)))
        : el('div', { class: 'notice error', role: 'alert' }, el('p', null, outcome.outcome.error), el('p', null, el('strong', null, 'Fix: '), outcome.outcome.fix))));
    } catch (error) {
      replace(result, el('p', { class: 'notice error', role: 'alert' }, message(error)));
    }
  }
}

/** A project's state in words. @param {Project} project */
function stateLabel(project) {
  return project.state === 'needsTrust' ? 'needs trust' : project.state;
}

/**
 * Shows what a project's `project.md` gives the agents working in it — its name,
 * description, instructions, the sources reaching outside its folder and its web
 * sources — and asks whether to adopt (or trust) it. Everything shown is text: the
 * file may come from anywhere. Cancel has the focus, so a stray Enter adopts nothing.
 * @param {ProjectReview} review
 * @returns {Promise<boolean>}
 */
export function reviewDialog(review) {
  const adopt = review.reason === 'adopt';
  const title = adopt ? `Adopt “${review.name}”?` : `Trust “${review.name}” again?`;
  const lead = adopt
    ? `${review.folder}/project.md was not written by Hearth (a cloned folder, say). Adopting it gives every agent working in the project its description and instructions, makes the folders below their working directories and the files below part of the context they read. Adopt it only if you trust where it came from.`
    : review.reason === 'changed'
      ? `The project.md in ${review.folder} changed since you trusted it. The project takes no new turns until you trust what it gives its agents now:`
      : `The project.md in ${review.folder} was never trusted. The project takes no new turns until you trust what it gives its agents:`;
  /** @param {string} label @param {string} kind @param {string} target @param {string[]} [reaches] */
  const source = (label, kind, target, reaches) => el('li', { 'aria-label': label },
    el('span', { class: 'badge' }, kind), ' ', el('code', null, target),
    reaches ? el('span', { class: 'reaches' }, ' → ', ...reaches.flatMap((path, index) => [index ? ', ' : '', el('code', null, path)])) : null);
  const outside = review.outsideSources.length
    ? el('ul', { class: 'sources outside' }, ...review.outsideSources.map((s) => source(`${s.kind} ${s.target}`, s.kind, s.target, s.reaches)))
    : el('p', { class: 'muted' }, 'None.');
  const cancel = el('button', { value: 'cancel', class: 'button', autofocus: true }, 'Cancel');
  const dialog = el('dialog', { class: 'dialog review', 'aria-label': title },
    el('h2', null, title),
    el('p', { class: 'notice warn' }, lead),
    el('dl', { class: 'facts' },
      el('dt', null, 'Project'), el('dd', null, review.name, ' ', el('span', { class: 'muted' }, `(${review.id})`)),
      el('dt', null, 'Folder'), el('dd', null, el('code', null, review.folder)),
    ),
    review.description ? el('h3', null, 'Description') : null,
    review.description ? el('pre', { class: 'instructions description' }, review.description) : null,
    el('h3', null, 'Instructions'),
    el('pre', { class: 'instructions' }, review.instructions || '(none)'),
    el('h3', null, 'Sources outside the folder'),
    outside,
    review.webSources.length ? el('h3', null, 'Web sources') : null,
    review.webSources.length ? el('p', { class: 'muted' }, 'Fetched, and sites agents may then fetch from without asking.') : null,
    review.webSources.length ? el('ul', { class: 'sources web' }, ...review.webSources.map((s) => source(`${s.kind} ${s.target}`, s.kind, s.target))) : null,
    review.insideSources ? el('p', { class: 'muted' }, `And ${review.insideSources} source${review.insideSources === 1 ? '' : 's'} inside the folder.`) : null,
    el('form', { method: 'dialog', class: 'dialog-actions' },
      cancel,
      el('button', { value: 'ok', class: 'button danger' }, adopt ? 'Adopt' : 'Trust'),
    ),
  );
  return new Promise((resolve) => {
    const opener = document.activeElement;
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
      returnFocus(opener);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/**
 * Before a project is entered: if its `project.md` changed since the user trusted it
 * (or was never trusted), shows what it gives its agents and trusts it on their word.
 * Resolves whether the project may be entered.
 * @param {Rpc} rpc
 * @param {string} projectId
 * @returns {Promise<boolean>}
 */
export async function trustBeforeEntering(rpc, projectId) {
  const { project } = await rpc.call('project/get', { project: projectId });
  if (project.state !== 'needsTrust' || !project.review) return true;
  if (!(await reviewDialog(project.review))) return false;
  await rpc.call('project/trust', { project: projectId, reviewDigest: project.review.digest });
  return true;
}

export class ProjectsPage {
  /**
   * @param {PageContext} context
   * @param {HTMLElement} host
   * @param {string | null} projectId
   */
  constructor(context, host, projectId) {
    this.rpc = context.rpc;
    this.app = context.app;
    this.host = host;
    this.projectId = projectId;
  }

  render() {
    if (this.projectId) this.renderOne(this.projectId);
    else this.renderList();
  }

  async renderList() {
    replace(this.host, el('header', { class: 'page-header' }, el('h1', null, 'Projects')), el('p', { class: 'muted' }, 'Reading…'));
    let projects;
    try {
      projects = (await this.rpc.call('project/list', {})).projects;
    } catch (error) {
      replace(this.host, el('h1', null, 'Projects'), el('p', { class: 'notice error', role: 'alert' }, message(error)));
      return;
    }
    const name = el('input', { class: 'input', type: 'text', name: 'name', required: true, placeholder: 'Name', 'aria-label': 'Project name' });
    const folder = el('input', { class: 'input', type: 'text', name: 'folder', required: true, placeholder: '/full/path/of/its/folder', 'aria-label': 'Project folder' });
    const status = el('p', { class: 'card-error', role: 'alert' });
    const form = el('form', { class: 'filters new-project', onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault();
      this.create(name.value.trim(), folder.value.trim(), status);
    } }, name, folder, el('button', { class: 'button primary', type: 'submit' }, 'New project'));
    replace(this.host,
      el('header', { class: 'page-header' }, el('h1', null, 'Projects')),
      el('p', { class: 'muted' }, 'A project is a folder with instructions and context sources; its chats work in that folder and see the sources. A folder that already holds a project.md is adopted once you have seen what it gives its agents.'),
      form,
      status,
      projects.length
        ? el('div', { class: 'cards' }, ...projects.map((project) => el('div', { class: 'card', dataset: { project: project.id } },
            el('div', { class: 'card-title' }, el('strong', null, project.name), el('span', { class: `badge ${project.state}` }, stateLabel(project))),
            el('p', { class: 'muted' }, project.description || project.folder),
            project.problem ? el('p', { class: 'notice warn' }, project.problem) : null,
            el('p', { class: 'muted' }, `${(project.sources ?? []).length} source${(project.sources ?? []).length === 1 ? '' : 's'}`),
            el('div', { class: 'card-actions' },
              el('button', { class: 'button primary', type: 'button', onclick: () => this.app.enterProject(project.id) }, 'Enter'),
              el('a', { class: 'button', href: `#/project/${encodeURIComponent(project.id)}` }, 'Details'),
            ),
          )))
        : el('p', { class: 'empty' }, 'No projects yet. Give one a name and its folder above, or run ', el('code', null, 'hearth projects new NAME --folder DIR --source FILE'), '.'),
    );
  }

  /**
   * Makes a project in `folder`, or adopts the project.md it holds once the user has
   * seen what it gives its agents and said Adopt.
   * @param {string} name
   * @param {string} folder
   * @param {HTMLElement} status
   */
  async create(name, folder, status) {
    status.textContent = '';
    try {
      let answer = await this.rpc.call('project/create', { name, folder });
      if (answer.type === 'needsTrust') {
        if (!(await reviewDialog(answer.review))) {
          status.textContent = `Not adopted: ${folder} is not a project of Hearth's, and nothing was changed.`;
          return;
        }
        answer = await this.rpc.call('project/create', { name, folder, trust: true, reviewDigest: answer.review.digest });
      }
      if (answer.type !== 'created') return;
      await this.app.loadProjects();
      location.hash = `#/project/${encodeURIComponent(answer.project.id)}`;
    } catch (error) {
      status.textContent = message(error);
    }
  }

  /** @param {string} id */
  async renderOne(id) {
    let project;
    try {
      project = (await this.rpc.call('project/get', { project: id })).project;
    } catch (error) {
      replace(this.host, el('h1', null, 'Project'), el('p', { class: 'notice error', role: 'alert' }, message(error)), el('a', { href: '#/projects' }, 'All projects'));
      return;
    }
    const sources = el('ul', { class: 'sources' }, ...(project.sources ?? []).map((source) => el('li', null,
      el('span', { class: 'badge' }, source.kind), ' ', el('code', null, source.target),
      el('button', { class: 'button subtle small', type: 'button', 'aria-label': `Remove ${source.target}`, onclick: async () => {
        try {
          await this.rpc.call('project/removeSource', { project: id, source: source.target });
          this.renderOne(id);
        } catch (error) {
          error_.textContent = message(error);
        }
      } }, 'Remove'),
    )));
    const error_ = el('p', { class: 'card-error', role: 'alert' });
    const input = el('input', { class: 'input', type: 'text', placeholder: 'a file, folder or URL', 'aria-label': 'New source' });
    const add = el('form', { class: 'filters', onsubmit: async (/** @type {Event} */ event) => {
      event.preventDefault();
      if (!input.value.trim()) return;
      try {
        await this.rpc.call('project/addSource', { project: id, source: input.value.trim() });
        this.renderOne(id);
      } catch (error) {
        error_.textContent = message(error);
      }
    } }, input, el('button', { class: 'button', type: 'submit' }, 'Add source'));
    replace(this.host,
      el('header', { class: 'page-header' }, el('h1', null, project.name),
        el('button', { class: 'button primary', type: 'button', onclick: () => this.app.enterProject(project.id) }, 'Enter project'),
        el('a', { class: 'button', href: settingsHref(project.id) }, 'Settings')),
      project.review ? el('div', { class: 'notice warn trust' },
        el('p', null, project.review.reason === 'changed'
          ? 'Its project.md changed since you trusted it: the project takes no new turns until you look at it again.'
          : 'Its project.md was never trusted: the project takes no new turns until you look at it.'),
        el('button', { class: 'button', type: 'button', onclick: async () => {
          try {
            if (project.review && (await reviewDialog(project.review))) {
              await this.rpc.call('project/trust', { project: id, reviewDigest: project.review.digest });
              await this.app.loadProjects();
            }
            this.renderOne(id);
          } catch (error) {
            error_.textContent = message(error);
          }
        } }, 'Review and trust')) : null,
      el('dl', { class: 'facts' },
        el('dt', null, 'Folder'), el('dd', null, el('code', null, project.folder)),
        el('dt', null, 'State'), el('dd', null, projectStateLine(this.rpc, project)),
        el('dt', null, 'Agent'), el('dd', null, project.agent || project.provider || 'the default'),
      ),
      el('h2', null, 'Context sources'),
      (project.sources ?? []).length ? sources : el('p', { class: 'muted' }, 'No sources.'),
      add,
      error_,
      el('h2', null, 'Instructions'),
      el('pre', { class: 'instructions' }, project.instructions || '(none)'),
    );
  }
}
