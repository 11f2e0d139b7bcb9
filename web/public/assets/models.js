// @ts-check
// The models Hearth's own agent can use in a chat: those the provider is configured with
// (`provider/list`: `models`, `default_model`), the session's, and, on request, those the
// provider says it offers (`provider/test`). External agents report their own models.

import { message } from './dom.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */
/** @typedef {import('../../protocol').ProviderInfo} ProviderInfo */

/** The value of the option that asks the provider for its models. */
export const ASK_PROVIDER = 'hearth:ask-the-provider';

/** @type {WeakMap<Rpc, Promise<ProviderInfo[]>>} */
const providerLists = new WeakMap();
/** @type {Map<string, string[]>} models a provider said it offers, by provider */
const offered = new Map();

/**
 * The providers the server knows (asked once per connection).
 * @param {Rpc} rpc
 */
export function providers(rpc) {
  let list = providerLists.get(rpc);
  if (!list) {
    list = rpc.call('provider/list', {}).then((answer) => answer.providers).catch(() => []);
    providerLists.set(rpc, list);
  }
  return list;
}

/**
 * Forgets the providers asked for, so the next use reads them again (a provider was
 * added while the server runs).
 * @param {Rpc} rpc
 */
export function forgetProviders(rpc) {
  providerLists.delete(rpc);
}

/**
 * The model choices for a chat of Hearth's own agent on `provider`, current first
 * known; `null` when the harness is not a model provider.
 * @param {Rpc} rpc
 * @param {string} provider
 * @param {string | null | undefined} current
 * @returns {Promise<{ current: string, choices: string[], asked: boolean } | null>}
 */
export async function modelChoices(rpc, provider, current) {
  const info = (await providers(rpc)).find((candidate) => candidate.id === provider);
  if (!info) return null;
  const chosen = current || info.defaultModel || '';
  const choices = [...new Set([chosen, info.defaultModel ?? '', ...info.models, ...(offered.get(provider) ?? [])].filter(Boolean))];
  return { current: chosen, choices, asked: offered.has(provider) };
}

/**
 * Asks the provider which models it offers; they join the choices.
 * @param {Rpc} rpc
 * @param {string} provider
 * @returns {Promise<string>} an error to show, or ''
 */
export async function askProvider(rpc, provider) {
  try {
    const answer = await rpc.call('provider/test', { provider });
    const outcome = answer.results[0]?.outcome;
    if (!outcome) return `${provider} was not checked`;
    if (outcome.type === 'failed') return `${provider} did not answer: ${outcome.error}. ${outcome.fix}`;
    offered.set(provider, outcome.models);
    return '';
  } catch (error) {
    return message(error);
  }
}
