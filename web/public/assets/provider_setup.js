// @ts-check
// Adding a model provider from Setup: its name, the API it speaks, base URL, model and
// key (pasted, or the name of an environment variable). The server checks it the way
// `hearth doctor` does before anything is saved; a provider that does not answer is
// shown with the error, and nothing is written.

import { el, replace, message } from './dom.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */
/** @typedef {{rpc: Rpc, app: any}} PageContext */
/** @typedef {import('../../protocol').ProviderAddParams} ProviderAddParams */

/** What each kind is called, and where its official endpoint is. */
const KINDS = {
  openai: { label: 'OpenAI-compatible', base: 'https://api.openai.com/v1', model: 'gpt-4o-mini', variable: 'OPENAI_API_KEY' },
  anthropic: { label: 'Anthropic', base: 'https://api.anthropic.com', model: 'claude-sonnet-4-5', variable: 'ANTHROPIC_API_KEY' },
};

/**
 * The request a filled form makes.
 * @param {{id: string, kind: string, baseUrl: string, model: string, keySource: string, key: string, variable: string}} form
 * @returns {ProviderAddParams}
 */
export function addRequest(form) {
  /** @type {ProviderAddParams['key']} */
  const key = form.keySource === 'pasted'
    ? { type: 'pasted', key: form.key }
    : form.keySource === 'environment'
      ? { type: 'environment', variable: form.variable.trim() }
      : { type: 'none' };
  return {
    id: form.id.trim(),
    kind: form.kind === 'anthropic' ? 'anthropic' : 'openai',
    ...(form.baseUrl.trim() ? { baseUrl: form.baseUrl.trim() } : {}),
    ...(form.model.trim() ? { model: form.model.trim() } : {}),
    key,
  };
}

export class ProviderSetupPage {
  /**
   * @param {PageContext} context
   * @param {HTMLElement} host
   */
  constructor(context, host) {
    this.rpc = context.rpc;
    this.app = context.app;
    this.host = host;
  }

  render() {
    const id = el('input', { class: 'input', type: 'text', name: 'id', required: true, pattern: '[A-Za-z0-9_\\-]{1,64}', placeholder: 'e.g. work-openai', autocomplete: 'off' });
    const kind = el('select', { class: 'select', name: 'kind' },
      ...Object.entries(KINDS).map(([value, kind]) => el('option', { value }, kind.label)));
    const baseUrl = el('input', { class: 'input', type: 'url', name: 'baseUrl', placeholder: KINDS.openai.base });
    const model = el('input', { class: 'input', type: 'text', name: 'model', placeholder: KINDS.openai.model });
    const key = el('input', { class: 'input', type: 'password', name: 'key', autocomplete: 'off' });
    const variable = el('input', { class: 'input', type: 'text', name: 'variable', placeholder: KINDS.openai.variable, autocomplete: 'off' });
    /** @param {string} value @param {string} label @param {boolean} checked */
    const choice = (value, label, checked) => el('label', { class: 'choice' }, el('input', { type: 'radio', name: 'keySource', value, checked }), ' ', label);
    const keyFields = el('div', { class: 'key-fields' });
    const showKeyField = () => {
      const source = /** @type {HTMLInputElement | null} */ (form.querySelector('input[name=keySource]:checked'))?.value ?? 'pasted';
      replace(keyFields,
        source === 'pasted' ? el('label', { class: 'field' }, el('span', null, 'API key'), key, el('span', { class: 'muted hint' }, 'Kept in a file of Hearth’s data directory that only you can read; config.toml names the file, never the key.')) : null,
        source === 'environment' ? el('label', { class: 'field' }, el('span', null, 'Environment variable'), variable, el('span', { class: 'muted hint' }, 'Read from the environment of the Hearth server.')) : null,
        source === 'none' ? el('p', { class: 'muted hint' }, 'For a local server that asks for no key.') : null,
      );
    };
    kind.addEventListener('change', () => {
      const chosen = kind.value === 'anthropic' ? KINDS.anthropic : KINDS.openai;
      baseUrl.placeholder = chosen.base;
      model.placeholder = chosen.model;
      variable.placeholder = chosen.variable;
    });
    const submit = el('button', { class: 'button primary', type: 'submit' }, 'Test and save');
    this.result = el('div', { class: 'provider-result', role: 'status', 'aria-live': 'polite' });
    const form = el('form', { class: 'settings-form provider-form', onsubmit: (/** @type {Event} */ event) => {
      event.preventDefault();
      const source = /** @type {HTMLInputElement | null} */ (form.querySelector('input[name=keySource]:checked'))?.value ?? 'pasted';
      this.add(addRequest({ id: id.value, kind: kind.value, baseUrl: baseUrl.value, model: model.value, keySource: source, key: key.value, variable: variable.value }), submit);
    } },
      el('label', { class: 'field' }, el('span', null, 'Name'), id, el('span', { class: 'muted hint' }, 'Letters, digits, - and _; chats name the provider by it.')),
      el('div', { class: 'settings-pair' },
        el('label', { class: 'field' }, el('span', null, 'API'), kind),
        el('label', { class: 'field' }, el('span', null, 'Model'), model),
      ),
      el('label', { class: 'field' }, el('span', null, 'Base URL'), baseUrl, el('span', { class: 'muted hint' }, 'Leave empty for the official endpoint.')),
      el('fieldset', { class: 'key-source' },
        el('legend', null, 'Key'),
        choice('pasted', 'Paste the key', true),
        choice('environment', 'From an environment variable', false),
        choice('none', 'No key', false),
        keyFields,
      ),
      el('div', { class: 'card-actions' }, submit, el('a', { class: 'button', href: '#/setup' }, 'Back to Setup')),
    );
    form.addEventListener('change', (event) => {
      if (event.target instanceof HTMLInputElement && event.target.name === 'keySource') showKeyField();
    });
    replace(this.host,
      el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/setup' }, 'Setup'), ' / ', 'Add a provider'),
      el('header', { class: 'page-header' }, el('h1', null, 'Add a model provider')),
      el('p', { class: 'muted' }, 'Hearth asks the provider for a one-token answer first (the check of hearth doctor); only a provider that answers is added to config.toml, with its comments and other entries kept.'),
      form,
      this.result,
    );
    showKeyField();
  }

  /**
   * @param {ProviderAddParams} request
   * @param {HTMLButtonElement} button
   */
  async add(request, button) {
    const result = this.result;
    if (!result) return;
    button.disabled = true;
    result.className = 'provider-result';
    replace(result, el('p', { class: 'muted' }, `Testing ${request.id}…`));
    try {
      const answer = await this.rpc.call('provider/add', request);
      if (answer.type === 'failed') {
        const outcome = answer.test.outcome;
        result.className = 'provider-result failed';
        replace(result, el('div', { class: 'notice error', role: 'alert' },
          el('p', null, el('strong', null, 'The test failed; nothing was saved. ')),
          el('p', { class: 'test-error' }, outcome.type === 'failed' ? outcome.error : 'no answer'),
          outcome.type === 'failed' && outcome.fix ? el('p', null, el('strong', null, 'Fix: '), outcome.fix) : null));
        return;
      }
      const outcome = answer.test.outcome;
      result.className = 'provider-result added';
      replace(result, el('div', { class: 'notice ok' },
        el('p', null, el('strong', null, `Added ${answer.provider.id}. `), outcome.type === 'ok' ? `It answered in ${outcome.latencyMs} ms (${outcome.method}).` : ''),
        el('p', null, answer.provider.key.type === 'found' ? `Key from ${answer.provider.key.from}.` : answer.provider.key.type === 'notNeeded' ? 'No key needed.' : ''),
        el('p', null, answer.usableNow ? 'Ready: choose it as the Agent of a new chat.' : 'It is listed in Setup now; restart hearth serve to start chats with it.'),
        el('a', { href: '#/setup' }, 'Back to Setup')));
    } catch (error) {
      result.className = 'provider-result failed';
      replace(result, el('p', { class: 'notice error', role: 'alert' }, `Not saved: ${message(error)}`));
    } finally {
      button.disabled = false;
    }
  }
}
