// @ts-check
// A project's settings (name, description, instructions with a preview, its context
// sources and where each stands, the default agent and model of its new chats,
// deleting it), and the line in a project chat's composer that says whether the
// project's context is ready. Where the sources stand is asked of the server once and
// then learnt from answers that come when a preparation ends, never by asking on a
// timer.

import { el, replace, message, returnFocus } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { acceptDrops, uploadFile } from './attachments.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */
/** @typedef {{rpc: Rpc, app: any}} PageContext */
/** @typedef {import('../../protocol').Project} Project */
/** @typedef {import('../../protocol').ProjectContextResponse} ProjectContext */
/** @typedef {import('../../protocol').ProjectSourceStatus} SourceStatus */

/** The words for a source's state. */
const STATE_LABEL = {
  ready: 'Ready',
  materializing: 'Preparing',
  pending: 'Not prepared yet',
  failed: 'Failed',
};

/**
 * Where a project's context stands, in a few words.
 * @param {ProjectContext} context
 */
export function contextSummary(context) {
  const total = context.sources.length;
  if (!total) return 'no context sources';
  if (context.failed) return `${context.failed} of ${total} source${total === 1 ? '' : 's'} failed`;
  if (context.materializing) return 'preparing context';
  if (context.sources.some((source) => source.state === 'pending')) return 'context not prepared yet';
  return 'context ready';
}

/**
 * Asks where a project's context stands, then again each time the preparation under
 * way ends, drawing every answer; stops when nothing is being prepared or `alive` says
 * the drawing is gone.
 * @param {Rpc} rpc
 * @param {string} projectId
 * @param {(context: ProjectContext) => void} draw
 * @param {() => boolean} alive
 */
export async function followContext(rpc, projectId, draw, alive) {
  let context = await rpc.call('project/context', { project: projectId });
  if (!alive()) return;
  draw(context);
  while (context.materializing && alive()) {
    context = await rpc.call('project/context', { project: projectId, wait: true });
    if (alive()) draw(context);
  }
}

/**
 * The project page's state line: a ready project is only called ready when its
 * context is (a failed source is said, never hidden behind "ready").
 * @param {Rpc} rpc
 * @param {Project} project
 */
export function projectStateLine(rpc, project) {
  const label = project.state === 'needsTrust' ? 'needs trust' : project.state;
  if (project.state !== 'ready') return el('span', { class: 'project-state' }, label, project.problem ? ` — ${project.problem}` : '');
  const line = el('span', { class: 'project-state', role: 'status' }, 'checking its context…');
  followContext(rpc, project.id, (context) => {
    const failed = context.failed > 0;
    replace(line,
      el('span', { class: failed ? 'badge failed' : context.materializing ? 'badge pending' : 'badge ready' }, failed ? 'context failed' : context.materializing ? 'preparing' : 'ready'),
      ' ',
      contextSummary(context),
      failed ? ' — ' : '',
      failed ? el('a', { href: settingsHref(project.id) }, 'see the sources') : '',
    );
  }, () => line.isConnected).catch((error) => {
    replace(line, `could not read its context: ${message(error)}`);
  });
  return line;
}

/** @param {string} projectId */
export function settingsHref(projectId) {
  return `#/project/${encodeURIComponent(projectId)}/settings`;
}

/** The composer lines shown, by tab. @type {WeakMap<object, {project: string, line: HTMLElement}>} */
const composerLines = new WeakMap();

/**
 * In a project chat's composer: where the project's context stands (preparing, ready,
 * or how many sources failed, with the way to them). The first prompt of a chat waits
 * on the server until the context is prepared, so a message sent meanwhile is held
 * there, not lost; the line says so. Call it whenever the session is read again; it
 * draws once per tab.
 * @param {{rpc: Rpc, form: HTMLElement, session: {summary: {scope: import('../../protocol').Scope}} | null}} tab
 */
export function showContextStatus(tab) {
  const scope = tab.session?.summary.scope;
  if (!scope || scope.type !== 'project') return;
  const known = composerLines.get(tab);
  if (known && known.project === scope.projectId) return;
  known?.line.remove();
  const line = el('p', { class: 'context-status', role: 'status', dataset: { state: 'checking' } }, 'Checking the project’s context…');
  composerLines.set(tab, { project: scope.projectId, line });
  tab.form.prepend(line);
  const projectId = scope.projectId;
  followContext(tab.rpc, projectId, (context) => {
    if (!context.sources.length) {
      line.hidden = true;
      return;
    }
    line.hidden = false;
    const state = context.failed ? 'failed' : context.materializing ? 'materializing' : context.sources.some((source) => source.state === 'pending') ? 'pending' : 'ready';
    line.dataset.state = state;
    const total = context.sources.length;
    const sources = `${total} source${total === 1 ? '' : 's'}`;
    if (state === 'failed') {
      replace(line, `Project context: ${context.failed} of ${sources} failed. `, el('a', { href: settingsHref(projectId) }, 'Retry in the project settings'));
    } else if (state === 'materializing' || state === 'pending') {
      replace(line, `Preparing the project context (${sources})… A message sent now waits until it is ready.`);
    } else {
      replace(line, `Project context ready (${sources}).`);
    }
  }, () => line.isConnected).catch((error) => {
    replace(line, `Could not read the project context: ${message(error)}`);
  });
}

export class ProjectSettingsPage {
  /**
   * @param {PageContext} context
   * @param {HTMLElement} host
   * @param {string} projectId
   */
  constructor(context, host, projectId) {
    this.rpc = context.rpc;
    this.app = context.app;
    this.host = host;
    this.projectId = projectId;
    this.left = false;
    this.generation = 0;
    this.sourceList = el('ul', { class: 'sources source-status', 'aria-label': 'Context sources' });
    this.sourceError = el('p', { class: 'card-error', role: 'alert' });
  }

  leave() {
    this.left = true;
  }

  async render() {
    replace(this.host, el('header', { class: 'page-header' }, el('h1', null, 'Project settings')), el('p', { class: 'muted' }, 'Reading…'));
    /** @type {Project} */
    let project;
    try {
      project = (await this.rpc.call('project/get', { project: this.projectId })).project;
    } catch (error) {
      replace(this.host, el('h1', null, 'Project settings'), el('p', { class: 'notice error', role: 'alert' }, message(error)), el('a', { href: '#/projects' }, 'All projects'));
      return;
    }
    if (this.left) return;
    this.project = project;
    this.draw(project);
  }

  /** @param {Project} project */
  draw(project) {
    const id = project.id;
    const name = el('input', { class: 'input', type: 'text', name: 'name', required: true, value: project.name });
    const description = el('input', { class: 'input', type: 'text', name: 'description', value: project.description ?? '', placeholder: 'A line about it' });
    const harnesses = this.rpc.server?.harnesses ?? [];
    const chosen = project.agent || project.provider || '';
    const agent = el('select', { class: 'select', name: 'agent' },
      el('option', { value: '', selected: !chosen }, 'Hearth’s default'),
      ...harnesses.map((harness) => el('option', { value: harness.id, selected: harness.id === chosen }, harness.name)),
      chosen && !harnesses.some((harness) => harness.id === chosen) ? el('option', { value: chosen, selected: true }, `${chosen} (not in this server)`) : null,
    );
    const models = el('datalist', { id: 'project-models' });
    const model = el('input', { class: 'input', type: 'text', name: 'model', value: project.model ?? '', placeholder: 'The agent’s default', list: 'project-models' });
    this.offerModels(models);
    const instructions = el('textarea', { class: 'input instructions-editor', name: 'instructions', rows: 12, spellcheck: true }, project.instructions ?? '');
    instructions.value = project.instructions ?? '';
    const preview = el('div', { class: 'markdown instructions-preview', hidden: true, tabindex: '0', 'aria-label': 'Instructions preview' });
    const write = el('button', { class: 'button small', type: 'button', 'aria-pressed': 'true' }, 'Write');
    const show = el('button', { class: 'button small', type: 'button', 'aria-pressed': 'false' }, 'Preview');
    /** @param {boolean} previewing */
    const mode = (previewing) => {
      if (previewing) replace(preview, instructions.value.trim() ? renderMarkdown(instructions.value) : el('p', { class: 'muted' }, 'No instructions.'));
      preview.hidden = !previewing;
      instructions.hidden = previewing;
      write.setAttribute('aria-pressed', String(!previewing));
      show.setAttribute('aria-pressed', String(previewing));
    };
    write.addEventListener('click', () => mode(false));
    show.addEventListener('click', () => mode(true));
    const saved = el('p', { class: 'save-status', role: 'status' });
    const form = el('form', { class: 'settings-form', onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault();
      this.save({ name: name.value.trim(), description: description.value, defaultAgent: agent.value, defaultModel: model.value, instructions: instructions.value }, saved);
    } },
      el('label', { class: 'field' }, el('span', null, 'Name'), name),
      el('label', { class: 'field' }, el('span', null, 'Description'), description),
      el('div', { class: 'settings-pair' },
        el('label', { class: 'field' }, el('span', null, 'Default agent of new chats'), agent),
        el('label', { class: 'field' }, el('span', null, 'Default model'), model, models),
      ),
      el('div', { class: 'field' },
        el('div', { class: 'editor-bar' },
          el('label', { for: 'project-instructions' }, 'Instructions'),
          el('span', { class: 'spacer' }),
          el('div', { class: 'editor-modes', role: 'group', 'aria-label': 'Instructions view' }, write, show),
        ),
        el('p', { class: 'muted hint' }, 'Markdown. Every agent working in the project reads them.'),
        instructions,
        preview,
      ),
      el('div', { class: 'card-actions' }, el('button', { class: 'button primary', type: 'submit' }, 'Save')),
      saved,
    );
    instructions.id = 'project-instructions';
    const input = el('input', { class: 'input', type: 'text', placeholder: 'a file, folder or URL', 'aria-label': 'New source' });
    const add = el('form', { class: 'filters', onsubmit: async (/** @type {Event} */ event) => {
      event.preventDefault();
      if (!input.value.trim()) return;
      try {
        await this.rpc.call('project/addSource', { project: id, source: input.value.trim() });
        input.value = '';
        this.loadSources();
      } catch (error) {
        this.sourceError.textContent = message(error);
      }
    } }, input, el('button', { class: 'button', type: 'submit' }, 'Add source'), this.uploadControl(id));
    replace(this.host,
      el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/projects' }, 'Projects'), ' / ', el('a', { href: `#/project/${encodeURIComponent(id)}` }, project.name)),
      el('header', { class: 'page-header' }, el('h1', null, `Settings of ${project.name}`)),
      project.state !== 'ready' ? el('p', { class: 'notice warn' }, project.problem || `This project is ${project.state}.`) : null,
      el('section', { class: 'setup-section', 'aria-labelledby': 'settings-general' }, el('h2', { id: 'settings-general' }, 'General'), form),
      this.sourcesSection = el('section', { class: 'setup-section', 'aria-labelledby': 'settings-sources' },
        el('h2', { id: 'settings-sources' }, 'Context sources'),
        el('p', { class: 'muted' }, 'Converted once into snapshots that the project’s chats read. A source that failed is skipped until it changes or you retry it.'),
        this.sourceList,
        add,
        this.sourceError,
      ),
      el('section', { class: 'setup-section danger-zone', 'aria-labelledby': 'settings-delete' },
        el('h2', { id: 'settings-delete' }, 'Delete this project'),
        el('p', { class: 'muted' }, 'Hearth forgets the project. Its folder, its project.md and its chats stay; the chats take no new messages.'),
        el('button', { class: 'button danger', type: 'button', onclick: () => this.remove(project) }, 'Delete project…'),
      ),
    );
    acceptDrops(this.sourcesSection, (files) => this.uploadSources(id, files));
    this.loadSources();
  }

  /** The models the providers offer, as suggestions. @param {HTMLDataListElement} list */
  async offerModels(list) {
    try {
      const answer = await this.rpc.call('provider/list', {});
      const names = new Set(answer.providers.flatMap((provider) => [...provider.models, ...(provider.defaultModel ? [provider.defaultModel] : [])]));
      replace(list, ...[...names].map((name) => el('option', { value: name })));
    } catch {
      // Suggestions only: the field takes any model.
    }
  }

  /**
   * @param {{name: string, description: string, defaultAgent: string, defaultModel: string, instructions: string}} values
   * @param {HTMLElement} status
   */
  async save(values, status) {
    const project = this.project;
    if (!project) return;
    replace(status, 'Saving…');
    status.className = 'save-status';
    try {
      if (values.name && values.name !== project.name) {
        await this.rpc.call('project/rename', { project: project.id, name: values.name });
      }
      const answer = await this.rpc.call('project/update', {
        project: project.id,
        description: values.description,
        instructions: values.instructions,
        defaultAgent: values.defaultAgent,
        defaultModel: values.defaultModel,
      });
      this.project = answer.project;
      await this.app.loadProjects?.();
      status.className = 'save-status notice ok';
      replace(status, 'Saved.');
    } catch (error) {
      status.className = 'save-status notice error';
      replace(status, `Not saved: ${message(error)}`);
    }
  }

  /**
   * A button that uploads files as sources of the project (dropping files on the
   * sources does the same).
   * @param {string} id
   */
  uploadControl(id) {
    const picker = el('input', {
      type: 'file',
      multiple: true,
      class: 'visually-hidden',
      tabindex: '-1',
      'aria-hidden': 'true',
      'aria-label': 'Files to add as sources',
      onchange: () => {
        if (picker.files) this.uploadSources(id, [...picker.files]);
        picker.value = '';
      },
    });
    return el('span', { class: 'upload-source' },
      picker,
      el('button', { class: 'button', type: 'button', onclick: () => picker.click() }, 'Upload a file…'),
    );
  }

  /**
   * Uploads files and adds each as a source; a failure names the file and keeps the rest.
   * @param {string} id
   * @param {File[]} files
   */
  async uploadSources(id, files) {
    const failures = [];
    for (const file of files) {
      try {
        const uploaded = await uploadFile(this.rpc, file);
        await this.rpc.call('project/addSource', { project: id, source: uploaded.attachment.uri });
      } catch (error) {
        failures.push(`${file.name}: ${message(error)}`);
      }
    }
    this.sourceError.textContent = failures.length ? `Could not add ${failures.join('; ')}` : '';
    this.loadSources();
  }

  async loadSources() {
    const project = this.project;
    if (!project) return;
    this.sourceError.textContent = '';
    // Reads that overlap: only the newest one draws.
    const generation = ++this.generation;
    try {
      await followContext(this.rpc, project.id, (context) => this.drawSources(context), () => !this.left && generation === this.generation);
    } catch (error) {
      replace(this.sourceList, el('li', { class: 'notice warn' }, `Where the sources stand is not known: ${message(error)}`));
    }
  }

  /** @param {ProjectContext} context */
  drawSources(context) {
    if (!context.sources.length) {
      replace(this.sourceList, el('li', { class: 'muted' }, 'No sources.'));
      return;
    }
    const projectId = context.projectId;
    replace(this.sourceList, ...context.sources.map((source) => el('li', { dataset: { source: source.target, state: source.state } },
      el('div', { class: 'source-line' },
        el('span', { class: `badge ${source.state}` }, STATE_LABEL[source.state] ?? source.state),
        el('span', { class: 'badge' }, source.kind),
        el('code', { class: 'source-target' }, source.target),
        source.title ? el('span', { class: 'muted' }, source.title) : null,
        el('span', { class: 'spacer' }),
        source.state === 'failed'
          ? el('button', { class: 'button small', type: 'button', 'aria-label': `Retry ${source.target}`, onclick: (/** @type {Event} */ event) => this.retry(source, /** @type {HTMLButtonElement} */ (event.currentTarget)) }, 'Retry')
          : null,
        el('button', { class: 'button subtle small', type: 'button', 'aria-label': `Remove ${source.target}`, onclick: async () => {
          try {
            await this.rpc.call('project/removeSource', { project: projectId, source: source.target });
            this.loadSources();
          } catch (error) {
            this.sourceError.textContent = message(error);
          }
        } }, 'Remove'),
      ),
      source.error ? el('p', { class: 'source-error' }, source.error) : null,
    )));
  }

  /**
   * @param {SourceStatus} source
   * @param {HTMLButtonElement} button
   */
  async retry(source, button) {
    const project = this.project;
    if (!project) return;
    button.disabled = true;
    button.textContent = 'Retrying…';
    try {
      const context = await this.rpc.call('project/retrySource', { project: project.id, source: source.target });
      if (!this.left) this.drawSources(context);
    } catch (error) {
      button.disabled = false;
      button.textContent = 'Retry';
      this.sourceError.textContent = message(error);
    }
  }

  /**
   * Deletes the project once the user typed its name.
   * @param {Project} project
   */
  async remove(project) {
    if (!(await confirmByName(project.name))) return;
    try {
      await this.rpc.call('project/delete', { project: project.id });
      await this.app.loadProjects?.();
      location.hash = '#/projects';
    } catch (error) {
      this.sourceError.textContent = message(error);
    }
  }
}

/**
 * Asks the user to type a project's name to delete it; resolves whether they did.
 * @param {string} name
 * @returns {Promise<boolean>}
 */
export function confirmByName(name) {
  const title = `Delete “${name}”?`;
  const input = el('input', { class: 'input', type: 'text', autocomplete: 'off', spellcheck: false });
  const confirm = el('button', { value: 'ok', class: 'button danger', disabled: true }, 'Delete');
  input.addEventListener('input', () => {
    confirm.disabled = input.value.trim() !== name;
  });
  const dialog = el('dialog', { class: 'dialog confirm-delete', 'aria-label': title },
    el('h2', null, title),
    el('p', null, 'Its folder, project.md and chats stay; the chats take no new messages. Type the project’s name to delete it.'),
    el('form', { method: 'dialog' },
      el('label', { class: 'field' }, el('span', null, 'Project name'), input),
      el('div', { class: 'dialog-actions' },
        el('button', { value: 'cancel', class: 'button', formnovalidate: true }, 'Cancel'),
        confirm,
      ),
    ),
  );
  return new Promise((resolve) => {
    const opener = document.activeElement;
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok' && input.value.trim() === name);
      dialog.remove();
      returnFocus(opener);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
}
