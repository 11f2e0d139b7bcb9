// @ts-check
// One open session: its chats, the conversation of the chat shown, and its composer.
// A tab's element stays mounted while other tabs are shown, so nothing typed is lost;
// the draft also lives on the server (`chat/setDraft`), so it survives reloads and is
// the same in every window.

import { el, replace, when, diffView, message } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { reduceChat, reduceSession, pendingPermission, isRunning, partsOf, answerText, compactionNote } from './state.js';
import { explainError } from './tabs.js';
import { AttachmentTray, attachmentList, acceptDrops, pastedFiles } from './attachments.js';
import { copyButton } from './clipboard.js';
import { icon } from './icons.js';
import { FindBar } from './find_in_chat.js';
import { ASK_PROVIDER, askProvider, modelChoices } from './models.js';
import { showContextStatus } from './project_settings.js';

/** @typedef {import('./rpc.js').Rpc} Rpc */
/** @typedef {import('./rpc.js').Delivery} Delivery */
/** @typedef {import('../../protocol').ChatState} ChatState */
/** @typedef {import('../../protocol').SessionState} SessionState */
/** @typedef {import('../../protocol').Turn} Turn */
/** @typedef {import('../../protocol').ResponsePart} ResponsePart */
/** @typedef {import('../../protocol').Proposal} Proposal */
/** @typedef {import('../../protocol').HarnessInfo} HarnessInfo */

/** Turns shown when a chat opens; older ones load as the user scrolls up. */
const FIRST_PAGE = 40;
/** How long after a keystroke the draft is saved. */
const DRAFT_DELAY_MS = 400;

/**
 * @typedef {object} TabHost
 * @property {Rpc} rpc
 * @property {(uri: string) => HarnessInfo | undefined} harnessOf
 * @property {() => HarnessInfo[]} harnesses
 * @property {(tab: SessionTab) => void} changed   the tab's title or running state changed
 * @property {(uri: string) => void} openSession   opens (or shows) a session's tab
 * @property {(tab: SessionTab, provider: string) => Promise<void>} switchHarness
 * @property {(text: string) => void} announce
 */

/**
 * What choosing a permission option does, in Hearth's words (the agent's label may say
 * anything). The same words as the command line's prompt.
 * @param {string | null | undefined} kind
 * @param {boolean} [question] the agent asks a question rather than for permission
 */
function optionEffect(kind, question = false) {
  switch (kind) {
    case 'allowOnce': return 'Allow once';
    case 'allowAlways': return 'Allow always';
    case 'rejectOnce': return 'Refuse once';
    case 'rejectAlways': return 'Refuse always';
    // A question the agent asks (about no tool call): an option is an answer.
    default: return question ? 'Answer' : 'Agent\'s choice (what it does is not stated)';
  }
}

/**
 * A permission option as shown: Hearth's words first, then the agent's label, isolated.
 * @param {{ label: string, kind?: string | null }} option
 * @param {boolean} [question] the agent asks a question rather than for permission
 * @returns {Node[]}
 */
function optionText(option, question = false) {
  return [
    el('span', { class: 'option-effect' }, optionEffect(option.kind, question)),
    el('span', { class: 'option-label' }, 'agent: “', el('bdi', null, option.label), '”'),
  ];
}

export class SessionTab {
  /**
   * @param {TabHost} host
   * @param {string} uri
   */
  constructor(host, uri) {
    this.host = host;
    this.rpc = host.rpc;
    this.uri = uri;
    /** @type {SessionState | null} */
    this.session = null;
    /** @type {string | null} */
    this.chatUri = null;
    /** @type {ChatState | null} */
    this.chat = null;
    this.olderTurns = false;
    /** whether turns before those loaded by scrolling up remain */
    this.olderBeyond = false;
    this.loadingOlder = false;
    /** @type {string | null} the project a tab was opened in, until its session is read */
    this.projectHint = null;
    /** @type {Map<string, HTMLElement>} */
    this.turnElements = new Map();
    /** @type {Set<string>} */
    this.dirtyTurns = new Set();
    this.fullRender = true;
    this.frame = 0;
    this.visible = false;
    /** @type {Map<string, Proposal>} */
    this.proposals = new Map();
    this.lastLocalEdit = 0;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.draftTimer = undefined;
    this.closed = false;
    this.error = '';
    /** @type {Map<string, Turn>} the turn each side chat branched from, by chat */
    this.branchTurns = new Map();
    /** @type {Set<string>} side chats whose branch turn is being read */
    this.branchLoading = new Set();
    /** @type {Map<string, string>} why a side chat's branch turn could not be read */
    this.branchErrors = new Map();
    /** @type {string | undefined} the model chosen in this tab, until the session says */
    this.chosenModel = undefined;
    this.branch = el('div', { class: 'branch', hidden: true });
    this.chatsBar = el('nav', { class: 'chats-bar', 'aria-label': 'Chats of this session' });
    this.older = el('button', { class: 'button subtle older', hidden: true, onclick: () => this.loadOlder() }, 'Show earlier messages');
    this.transcript = el('div', { class: 'transcript', role: 'log', 'aria-label': 'Conversation', tabindex: '0' });
    this.scroller = el('div', { class: 'scroller' }, this.older, this.branch, this.transcript);
    this.textarea = el('textarea', {
      class: 'composer-input',
      rows: 2,
      placeholder: 'Ask anything…  (Enter sends, Shift+Enter for a new line)',
      'aria-label': 'Message',
      oninput: () => {
        this.edited();
        this.renderCommandMenu();
      },
      onpaste: (/** @type {ClipboardEvent} */ event) => {
        const files = pastedFiles(event);
        if (!files.length) return;
        event.preventDefault();
        this.tray.add(files);
      },
      onkeydown: (/** @type {KeyboardEvent} */ event) => {
        if (event.key === 'Tab' && !event.shiftKey && this.completeCommand()) {
          event.preventDefault();
          return;
        }
        if (event.key === 'Escape' && !this.commandMenu.hidden) {
          event.preventDefault();
          this.commandMenu.hidden = true;
          return;
        }
        if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          this.submit();
        }
      },
    });
    this.sendButton = el('button', { class: 'button primary send', type: 'submit', 'aria-label': 'Send' }, 'Send');
    this.stopButton = el('button', { class: 'button danger stop', type: 'button', hidden: true, onclick: () => this.stop() }, 'Stop');
    this.harnessSelect = el('select', { class: 'select', 'aria-label': 'Agent', onchange: () => this.harnessChanged() });
    this.modelSelect = el('select', { class: 'select', 'aria-label': 'Model', hidden: true, onchange: () => this.modelChanged() });
    this.modeSelect = el('select', { class: 'select', 'aria-label': 'Mode', hidden: true, onchange: () => this.modeChanged() });
    // The agent's own slash commands, offered while a `/name` is typed at the start.
    this.commandMenu = el('ul', { class: 'command-menu', role: 'listbox', 'aria-label': 'Agent commands', hidden: true });
    this.queueList = el('ul', { class: 'queue', 'aria-label': 'Queued messages' });
    this.gateNote = el('p', { class: 'gate-note', hidden: true, role: 'status' }, 'Answer the request above to go on.');
    this.composerError = el('div', { class: 'composer-error', role: 'alert', hidden: true });
    this.tray = new AttachmentTray(this.rpc, (text) => this.showError(text));
    this.form = el(
      'form',
      {
        class: 'composer',
        onsubmit: (/** @type {Event} */ event) => {
          event.preventDefault();
          this.submit();
        },
      },
      this.queueList,
      this.gateNote,
      this.composerError,
      this.commandMenu,
      this.tray.element,
      this.textarea,
      el('div', { class: 'composer-bar' }, this.tray.button, this.tray.input, this.harnessSelect, this.modelSelect, this.modeSelect, el('span', { class: 'spacer' }), this.stopButton, this.sendButton),
    );
    // Nothing can be sent before the chat is read.
    this.form.inert = true;
    this.landingTitle = el('div', { class: 'landing-title' }, el('h1', null, 'What shall we work on?'), el('p', { class: 'landing-subtitle' }));
    this.landingShelves = el('div', { class: 'landing-shelves' });
    this.element = el(
      'section',
      { class: 'session-view landing', role: 'tabpanel', hidden: true, dataset: { session: this.uri } },
      this.chatsBar,
      this.landingTitle,
      this.scroller,
      this.form,
      this.landingShelves,
    );
    acceptDrops(this.element, (files) => this.tray.add(files));
    this.findBar = new FindBar(this);
    this.element.prepend(this.findBar.element);
    this.scroller.addEventListener('scroll', () => {
      if (this.scroller.scrollTop < 80 && this.olderTurns) this.loadOlder();
    });
    this.rpc.subscribe(uri, (delivery) => this.sessionDelivered(delivery));
  }


  /** The title shown on the tab. */
  title() {
    return this.session?.summary.title || 'New chat';
  }

  running() {
    return Boolean(this.chat && isRunning(this.chat));
  }

  /** What decides whether this tab's session is unused (see tabs.js). */
  facts() {
    return { session: this.session, chat: this.chat, olderTurns: this.olderTurns, typed: this.textarea.value };
  }

  /** The chat shown, when it is a side chat: where it branched from. */
  sideOrigin() {
    const origin = this.chat?.summary.origin;
    return origin && origin.type === 'sideChat' ? origin : null;
  }

  /** @param {boolean} visible */
  setVisible(visible) {
    this.visible = visible;
    this.element.hidden = !visible;
    if (visible) this.schedule();
  }

  /** @param {Delivery} delivery */
  sessionDelivered(delivery) {
    if (delivery.type === 'ended') {
      this.error = `This session is gone: ${delivery.reason}`;
      this.session = null;
      this.host.changed(this);
      this.renderAll();
      return;
    }
    if (delivery.type === 'snapshot') {
      const state = delivery.snapshot.state;
      if (state.type !== 'session') return;
      const { type: _type, ...session } = state;
      this.session = session;
    } else if (this.session) {
      reduceSession(this.session, delivery.envelope.action);
    }
    if (!this.session) return;
    const chats = this.session.chats;
    if (!this.chatUri || !chats.some((chat) => chat.summary.uri === this.chatUri)) {
      if (chats.length) this.showChat(chats[0].summary.uri);
    }
    this.renderChats();
    this.renderHarness();
    showContextStatus(this);
    this.host.changed(this);
  }

  /** @param {string} chatUri */
  showChat(chatUri) {
    if (this.chatUri === chatUri) return;
    // What was typed in the chat left is saved with it before the composer changes hands.
    this.flushDraft();
    if (this.chatUri) this.rpc.unsubscribe(this.chatUri);
    this.chatUri = chatUri;
    this.chat = null;
    this.textarea.value = '';
    this.lastLocalEdit = 0;
    this.renderAll();
    this.rpc.subscribe(chatUri, (delivery) => this.chatDelivered(chatUri, delivery), { turnLimit: FIRST_PAGE });
  }

  /**
   * @param {string} chatUri
   * @param {Delivery} delivery
   */
  chatDelivered(chatUri, delivery) {
    if (chatUri !== this.chatUri) return;
    if (delivery.type === 'ended') {
      this.chat = null;
      this.error = `This chat is gone: ${delivery.reason}`;
      this.renderAll();
      return;
    }
    if (delivery.type === 'snapshot') {
      const state = delivery.snapshot.state;
      if (state.type !== 'chat') return;
      const { type: _type, ...chat } = state;
      const keepOlder = this.chat && this.chat.summary.uri === chat.summary.uri ? this.olderLoaded() : [];
      this.chat = chat;
      this.olderTurns = Boolean(chat.olderTurns);
      if (keepOlder.length && chat.turns.length) {
        // Turns loaded by scrolling up stay when a fresh snapshot replaces the page.
        const known = new Set(chat.turns.map((turn) => turn.id));
        const before = keepOlder.filter((turn) => !known.has(turn.id));
        if (before.length) {
          chat.turns.unshift(...before);
          this.olderTurns = this.olderBeyond;
        }
      }
      this.syncDraft(chat.draft ?? '');
      // The composer opens now, even in a window not drawn yet.
      this.renderComposer();
      this.fullRender = true;
      this.schedule();
      this.host.changed(this);
      this.refreshProposals();
      return;
    }
    if (!this.chat) return;
    const action = delivery.envelope.action;
    const turnId = reduceChat(this.chat, action);
    if (action.type === 'draftChanged') {
      this.syncDraft(action.draft ?? '');
      return;
    }
    if (action.type === 'queueChanged') {
      this.renderQueue();
      return;
    }
    if (turnId) this.dirtyTurns.add(turnId);
    if (action.type === 'turnStarted') this.fullRender = true;
    if (action.type === 'partAdded' && action.part.type === 'proposal') this.refreshProposals();
    if (action.type === 'turnCompleted') {
      this.host.announce(`${this.title()}: the answer is complete`);
    }
    if (action.type === 'turnStarted' || action.type === 'turnCompleted') this.host.changed(this);
    this.schedule();
  }

  /**
   * Shows a turn of the chat: older pages are loaded until it is there, then it is
   * scrolled to, marked and focused. Whether it was found.
   * @param {string} turnId
   */
  async revealTurn(turnId) {
    const find = () => this.transcript.querySelector(`[data-turn="${CSS.escape(turnId)}"]`);
    let turn = find();
    while (!turn && this.olderTurns && this.chat) {
      const before = this.chat.turns.length;
      await this.loadOlder();
      if (this.chat.turns.length === before) break;
      this.render();
      turn = find();
    }
    if (!(turn instanceof HTMLElement)) return false;
    turn.scrollIntoView({ block: 'center' });
    turn.classList.add('found');
    turn.tabIndex = -1;
    turn.focus({ preventScroll: true });
    setTimeout(() => turn.classList.remove('found'), 4000);
    return true;
  }

  /** Turns before the first page, loaded by scrolling up. */
  olderLoaded() {
    if (!this.chat) return [];
    return this.chat.turns.slice(0, Math.max(0, this.chat.turns.length - FIRST_PAGE));
  }

  async loadOlder() {
    if (!this.chat || !this.olderTurns || this.loadingOlder || !this.chatUri) return;
    const first = this.chat.turns[0];
    if (!first) return;
    this.loadingOlder = true;
    const chat = this.chat;
    try {
      const page = await this.rpc.call('chat/turns', { chat: this.chatUri, before: first.id, limit: 50 });
      if (this.chat !== chat) return;
      const height = this.scroller.scrollHeight;
      chat.turns.unshift(...page.turns);
      this.olderTurns = page.hasMore;
      this.olderBeyond = page.hasMore;
      this.fullRender = true;
      this.render();
      this.scroller.scrollTop += this.scroller.scrollHeight - height;
    } catch (error) {
      this.showError(`Could not load earlier messages: ${message(error)}`);
    } finally {
      this.loadingOlder = false;
    }
  }

  /** @param {string} draft */
  syncDraft(draft) {
    // What this window typed in the last moments wins over an echo of an older draft.
    if (Date.now() - this.lastLocalEdit < 1500) return;
    if (this.textarea.value !== draft) this.textarea.value = draft;
  }

  edited() {
    this.lastLocalEdit = Date.now();
    clearTimeout(this.draftTimer);
    this.draftTimer = setTimeout(() => this.saveDraft(), DRAFT_DELAY_MS);
  }

  async saveDraft() {
    if (!this.chatUri || this.closed) return;
    const text = this.textarea.value;
    const chat = this.chatUri;
    if (this.chat && this.chat.summary.uri === chat && (this.chat.draft ?? '') === text) return;
    try {
      await this.rpc.call('chat/setDraft', { chat, draft: text ? text : null });
    } catch (error) {
      this.showError(`The draft was not saved: ${message(error)}`);
    }
  }

  /** Saves a pending draft now (before a tab closes or the page unloads). */
  flushDraft() {
    if (this.draftTimer !== undefined) {
      clearTimeout(this.draftTimer);
      this.draftTimer = undefined;
      this.saveDraft();
    }
  }

  async submit() {
    const text = this.textarea.value.trim();
    if ((!text && !this.tray.pending()) || !this.chatUri || !this.chat) return;
    if (pendingPermission(this.chat)) return;
    await this.tray.settled();
    const attachments = this.tray.take();
    if (!text && !attachments.length) return;
    this.textarea.value = '';
    this.lastLocalEdit = Date.now();
    clearTimeout(this.draftTimer);
    this.draftTimer = undefined;
    await this.send(text, attachments);
  }

  /**
   * Sends now, or queues behind the running turn: the server keeps the queue with the
   * chat and sends one message per turn, in order.
   * @param {string} text
   * @param {import('../../protocol').Attachment[]} [attachments]
   */
  async send(text, attachments = []) {
    if (!this.chatUri) return;
    this.showError('');
    try {
      await this.rpc.call('chat/queue', { chat: this.chatUri, message: attachments.length ? { text, attachments } : { text } });
      this.rpc.call('chat/setDraft', { chat: this.chatUri, draft: null }).catch(() => {});
    } catch (error) {
      // Nothing is lost: the message and its files go back into the composer.
      if (!this.textarea.value) this.textarea.value = text;
      this.tray.restore(attachments);
      this.showError(message(error));
    }
  }

  /** @param {number} index */
  async unqueue(index) {
    if (!this.chatUri || !this.chat) return;
    const queued = [...(this.chat.queued ?? [])];
    queued.splice(index, 1);
    try {
      await this.rpc.call('chat/setQueue', { chat: this.chatUri, queued });
    } catch (error) {
      this.showError(message(error));
    }
  }

  async stop() {
    if (!this.chatUri) return;
    try {
      await this.rpc.call('chat/abort', { chat: this.chatUri });
    } catch (error) {
      this.showError(message(error));
    }
  }

  /** @param {string} text */
  showError(text) {
    replace(this.composerError, ...(text ? errorNotice(text).childNodes : []));
    this.composerError.hidden = !text;
  }

  harnessChanged() {
    const provider = this.harnessSelect.value;
    if (provider && this.session && provider !== this.session.summary.harness) {
      this.host.switchHarness(this, provider).catch((error) => {
        this.renderHarness();
        this.showError(message(error));
      });
    }
  }

  async modelChanged() {
    if (!this.chatUri) return;
    const harness = this.session?.summary.harness ?? '';
    if (this.modelSelect.value === ASK_PROVIDER) {
      this.modelSelect.disabled = true;
      const error = await askProvider(this.rpc, harness);
      this.modelSelect.disabled = false;
      delete this.modelSelect.dataset.choices;
      if (error) this.showError(error);
      this.renderProviderModels();
      return;
    }
    try {
      await this.rpc.call('chat/setModel', { chat: this.chatUri, model: this.modelSelect.value });
      this.chosenModel = this.modelSelect.value;
    } catch (error) {
      this.showError(message(error));
    }
  }

  /**
   * The model select of a chat with Hearth's own agent: the provider's configured models
   * and the session's, and an entry that asks the provider for the rest.
   */
  async renderProviderModels() {
    const harness = this.session?.summary.harness;
    const choices = harness ? await modelChoices(this.rpc, harness, this.chosenModel ?? this.session?.summary.model) : null;
    if (!choices || !choices.choices.length || this.chat?.agent?.models) {
      this.modelSelect.hidden = true;
      return;
    }
    this.modelSelect.hidden = false;
    // Drawn again only when the choices change (this runs on every render of the composer).
    const key = JSON.stringify(choices);
    if (this.modelSelect.dataset.choices === key) return;
    this.modelSelect.dataset.choices = key;
    replace(
      this.modelSelect,
      ...choices.choices.map((model) => el('option', { value: model, selected: model === choices.current }, model)),
      choices.asked ? null : el('option', { value: ASK_PROVIDER }, 'More models from the provider…'),
    );
  }

  async modeChanged() {
    if (!this.chatUri) return;
    try {
      await this.rpc.call('chat/setMode', { chat: this.chatUri, mode: this.modeSelect.value });
    } catch (error) {
      this.showError(message(error));
      this.renderModes();
    }
  }

  /** The agent's commands whose names start with the `/word` typed at the start, if any. */
  matchingCommands() {
    const commands = this.chat?.agent?.commands ?? [];
    const typed = /^\/(\S*)$/.exec(this.textarea.value);
    if (!typed || !commands.length) return [];
    return commands.filter((command) => command.name.startsWith(typed[1]));
  }

  renderCommandMenu() {
    const matches = this.matchingCommands();
    this.commandMenu.hidden = !matches.length;
    replace(
      this.commandMenu,
      ...matches.map((command) =>
        el(
          'li',
          {
            class: 'command',
            role: 'option',
            dataset: { command: command.name },
            // The textarea keeps the focus; the click picks the command.
            onmousedown: (/** @type {MouseEvent} */ event) => event.preventDefault(),
            onclick: () => this.useCommand(command.name),
          },
          el('span', { class: 'command-name' }, `/${command.name}`),
          command.inputHint ? el('span', { class: 'command-hint' }, ` ${command.inputHint}`) : '',
          command.description ? el('span', { class: 'command-description' }, ` — ${command.description}`) : '',
        ),
      ),
    );
  }

  /** Tab: completes the first command offered; whether there was one. */
  completeCommand() {
    const [first] = this.matchingCommands();
    if (!first) return false;
    this.useCommand(first.name);
    return true;
  }

  /** @param {string} name */
  useCommand(name) {
    this.textarea.value = `/${name} `;
    this.commandMenu.hidden = true;
    this.textarea.focus();
    this.edited();
  }

  async refreshProposals() {
    if (!this.chat) return;
    const wanted = this.chat.turns.some((turn) => partsOf(turn).some((part) => part.type === 'proposal'));
    if (!wanted) return;
    try {
      const page = await this.rpc.call('proposal/list', { session: this.uri, limit: 200 });
      for (const proposal of page.proposals) this.proposals.set(proposal.id, proposal);
      this.fullRender = true;
      this.schedule();
    } catch (error) {
      this.showError(`Could not read the proposals: ${message(error)}`);
    }
  }

  schedule() {
    if (!this.visible || this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  renderAll() {
    this.fullRender = true;
    this.schedule();
  }

  render() {
    const chat = this.chat;
    const side = this.sideOrigin();
    const landing = !this.error && !side && (!chat || (chat.turns.length === 0 && !this.olderTurns));
    this.renderBranch(side);
    this.findBar.render();
    this.element.classList.toggle('landing', landing);
    this.element.dataset.landing = String(landing);
    this.older.hidden = !this.olderTurns;
    const nearBottom = this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 120;
    if (this.error) {
      replace(this.transcript, el('div', { class: 'notice error', role: 'alert' }, this.error));
    } else if (chat && this.fullRender) {
      const seen = new Set();
      const nodes = chat.turns.map((turn) => {
        seen.add(turn.id);
        const node = this.renderTurn(turn);
        this.turnElements.set(turn.id, node);
        return node;
      });
      for (const id of [...this.turnElements.keys()]) if (!seen.has(id)) this.turnElements.delete(id);
      replace(this.transcript, ...nodes);
    } else if (chat) {
      for (const id of this.dirtyTurns) {
        const turn = chat.turns.find((candidate) => candidate.id === id);
        const old = this.turnElements.get(id);
        if (!turn || !old) continue;
        const node = this.renderTurn(turn);
        old.replaceWith(node);
        this.turnElements.set(id, node);
      }
    }
    this.fullRender = false;
    this.dirtyTurns.clear();
    if (chat && !performance.getEntriesByName('hearth-ready').length) {
      // The first conversation (or landing) drawn: what a visitor waits for.
      performance.mark('hearth-ready');
    }
    if (nearBottom && !landing) this.scroller.scrollTop = this.scroller.scrollHeight;
    this.renderComposer();
    if (landing) this.renderLanding();
  }

  /**
   * Above a side chat: the turn it branched from, read once.
   * @param {{ sourceChat: string, turnId: string } | null} side
   */
  renderBranch(side) {
    if (!side || !this.chatUri) {
      this.branch.hidden = true;
      replace(this.branch);
      return;
    }
    const chatUri = this.chatUri;
    const turn = this.branchTurns.get(chatUri);
    this.branch.hidden = false;
    if (!turn) {
      const failed = this.branchErrors.get(chatUri);
      replace(this.branch, el('p', { class: 'muted' }, failed
        ? `The turn this side chat branched from could not be read: ${failed}`
        : 'Side chat: reading the turn it branched from…'));
      if (!failed && !this.branchLoading.has(chatUri)) {
        this.branchLoading.add(chatUri);
        this.readBranchTurn(chatUri, side).finally(() => this.branchLoading.delete(chatUri));
      }
      return;
    }
    const answer = el('div', { class: 'message assistant' });
    for (const part of partsOf(turn)) {
      if (part.type === 'text' || part.type === 'error' || part.type === 'notice') answer.append(this.renderPart(turn, part));
    }
    replace(this.branch,
      el('p', { class: 'branch-note' }, 'Side chat from this turn — asked here, answered with its context; the main chat is not changed.'),
      el('div', { class: 'branch-turn', role: 'group', 'aria-label': 'The turn this side chat branched from' },
        el('div', { class: 'message user' }, el('div', { class: 'bubble' }, turn.user.text)),
        answer,
      ),
    );
  }

  /**
   * @param {string} chatUri
   * @param {{ sourceChat: string, turnId: string }} side
   */
  async readBranchTurn(chatUri, side) {
    try {
      const source = (await this.rpc.call('chat/resolve', { chat: side.sourceChat })).chat;
      const turn = source.turns.find((candidate) => candidate.id === side.turnId);
      if (!turn) throw new Error('it is no longer in the chat');
      this.branchTurns.set(chatUri, turn);
      this.renderAll();
    } catch (error) {
      this.branchErrors.set(chatUri, message(error));
      this.renderAll();
    }
  }

  renderComposer() {
    const chat = this.chat;
    const gate = chat ? pendingPermission(chat) : null;
    const running = Boolean(chat && isRunning(chat));
    this.form.inert = Boolean(gate) || !chat;
    this.form.classList.toggle('inert', Boolean(gate));
    this.gateNote.hidden = !gate;
    this.stopButton.hidden = !running;
    this.sendButton.textContent = running ? 'Queue' : 'Send';
    this.sendButton.setAttribute('aria-label', running ? 'Queue the message' : 'Send');
    this.renderModels();
    this.renderModes();
    this.renderQueue();
    this.fixHarness();
  }

  renderQueue() {
    const queued = this.chat?.queued ?? [];
    replace(
      this.queueList,
      ...queued.map((queuedMessage, index) =>
        el('li', { class: 'queued' },
          el('span', null, queuedMessage.text),
          ...(queuedMessage.attachments ?? []).map((attachment) => el('span', { class: 'queued-file', title: attachment.name }, icon('paperclip'), attachment.name)),
          el('button', {
            class: 'button subtle small',
            type: 'button',
            'aria-label': `Remove queued message ${index + 1}`,
            onclick: () => this.unqueue(index),
          }, '×'),
        ),
      ),
    );
  }

  renderHarness() {
    const harnesses = this.host.harnesses();
    const current = this.session?.summary.harness;
    const options = harnesses.map((harness) =>
      el('option', { value: harness.id, selected: harness.id === current }, harness.demo && !harness.name.includes('demo') ? `${harness.name} (demo)` : harness.name),
    );
    if (current && !harnesses.some((harness) => harness.id === current)) {
      options.push(el('option', { value: current, selected: true }, current));
    }
    replace(this.harnessSelect, ...options);
    this.fixHarness();
    const harness = current ? this.host.harnessOf(current) : undefined;
    const subtitle = this.landingTitle.querySelector('.landing-subtitle');
    if (subtitle) subtitle.textContent = harness ? `${harness.name}${harness.demo ? ' — a demo with scripted answers; add a provider in Setup' : ''}` : '';
  }

  /** The agent is fixed once the conversation starts, in any of the session's chats. */
  fixHarness() {
    const started = Boolean(this.chat && (this.chat.turns.length || this.olderTurns)) || (this.session?.chats.length ?? 0) > 1;
    this.harnessSelect.disabled = started;
    this.harnessSelect.title = started ? 'The agent is fixed once a chat has started; start a new chat for another agent.' : '';
  }

  renderModels() {
    const models = this.chat?.agent?.models;
    if (!models || !models.choices.length) {
      this.renderProviderModels();
      return;
    }
    this.modelSelect.hidden = false;
    delete this.modelSelect.dataset.choices;
    replace(
      this.modelSelect,
      ...models.choices.map((choice) => el('option', { value: choice.id, selected: choice.id === models.current }, choice.name)),
    );
  }

  renderModes() {
    const modes = this.chat?.agent?.modes;
    if (!modes || !modes.choices.length) {
      this.modeSelect.hidden = true;
      return;
    }
    this.modeSelect.hidden = false;
    replace(
      this.modeSelect,
      ...modes.choices.map((choice) =>
        el('option', { value: choice.id, selected: choice.id === modes.current, title: choice.description ?? '' }, choice.name || choice.id),
      ),
    );
  }

  renderChats() {
    const session = this.session;
    if (!session || session.chats.length < 2) {
      replace(this.chatsBar);
      this.chatsBar.hidden = true;
      return;
    }
    this.chatsBar.hidden = false;
    replace(
      this.chatsBar,
      ...session.chats.map((listing, index) => {
        const origin = listing.summary.origin;
        const label = listing.summary.title || (index === 0 ? 'Main' : origin.type === 'fork' ? 'Fork' : origin.type === 'sideChat' ? 'Side chat' : `Chat ${index + 1}`);
        return el('button', {
          class: `chip${listing.summary.uri === this.chatUri ? ' active' : ''}`,
          type: 'button',
          'aria-pressed': String(listing.summary.uri === this.chatUri),
          onclick: () => this.showChat(listing.summary.uri),
        }, label, listing.running ? el('span', { class: 'dot running', 'aria-label': 'running' }) : null);
      }),
    );
  }

  renderLanding() {
    replace(this.landingShelves);
    this.landingShelves.dispatchEvent(new CustomEvent('landing', { bubbles: true, detail: this }));
  }

  /** @param {Turn} turn */
  renderTurn(turn) {
    const harness = this.session ? this.host.harnessOf(this.session.summary.harness ?? '') : undefined;
    const chats = harness?.capabilities.multipleChats;
    const actions = el('div', { class: 'turn-actions' },
      copyButton('Copy the message', () => turn.user.text),
      el('button', { class: 'button subtle small', type: 'button', title: 'Edit this message and send it as a new branch; this history stays', onclick: () => this.editTurn(turn) }, icon('edit'), 'Edit'),
      el('button', { class: 'button subtle small', type: 'button', title: 'A new session that continues from here', onclick: () => this.fork(turn) }, 'Fork'),
      chats?.sideChat
        ? el('button', { class: 'button subtle small', type: 'button', title: 'Ask aside, with this context', onclick: () => this.sideChat(turn) }, 'Side chat')
        : null,
    );
    const bubble = el('div', { class: 'bubble' }, turn.user.text);
    const user = el('div', { class: 'message user' }, bubble, attachmentList(turn.user.attachments ?? []), actions);
    const response = el('div', { class: 'message assistant' });
    for (const part of partsOf(turn)) response.append(this.renderPart(turn, part));
    const footer = el('div', { class: 'turn-footer' });
    if (turn.stopReason) footer.append(...this.answerActions(turn));
    if (!turn.stopReason) {
      response.append(el('div', { class: 'typing', role: 'img', 'aria-label': 'answering' }, el('span'), el('span'), el('span')));
    } else if (turn.stopReason !== 'endTurn') {
      const reasons = {
        aborted: 'Stopped — what streamed is kept.',
        incomplete: 'Incomplete — Hearth stopped while this answer ran; what streamed is kept.',
        maxTokens: 'The answer hit the model’s output limit.',
        stepLimit: 'The agent hit its step limit.',
        refusal: 'The model refused.',
        error: 'The turn failed.',
      };
      footer.append(el('span', { class: `stop-reason ${turn.stopReason}` }, reasons[/** @type {keyof reasons} */ (turn.stopReason)] || String(turn.stopReason)));
    }
    const usage = turn.usage ? usageText(turn.usage) : '';
    if (usage) {
      footer.append(el('span', { class: 'usage', title: 'Tokens, the context window, cost' }, usage));
    }
    if (turn.completedAt) footer.append(el('time', { dateTime: turn.completedAt }, when(turn.completedAt)));
    return el('article', { class: 'turn', dataset: { turn: turn.id } }, user, response, footer);
  }

  /**
   * @param {Turn} turn
   * @param {ResponsePart} part
   * @returns {Node}
   */
  renderPart(turn, part) {
    switch (part.type) {
      case 'text':
        return el('div', { class: 'markdown' }, renderMarkdown(part.text));
      case 'reasoning':
        return el('details', { class: 'reasoning', open: !turn.stopReason }, el('summary', null, 'Reasoning'), el('div', { class: 'markdown' }, renderMarkdown(part.text)));
      case 'toolCall': {
        const args = JSON.stringify(part.arguments, null, 2);
        return el('details', { class: `tool-call ${part.status}`, dataset: { call: part.callId } },
          el('summary', null,
            el('span', { class: 'tool-name' }, part.title || part.name),
            el('span', { class: `badge ${part.status}` }, part.status),
          ),
          args && args !== '{}' && args !== 'null' ? el('pre', { class: 'arguments' }, args) : null,
          ...(part.content || []).map((content) =>
            content.type === 'text'
              ? el('div', { class: 'markdown' }, renderMarkdown(content.text))
              : content.type === 'diff'
                ? el('div', null, el('div', { class: 'path' }, content.path), diffView(`-${(content.oldText || '').split('\n').join('\n-')}\n+${content.newText.split('\n').join('\n+')}`))
                : el('div', { class: 'muted' }, `terminal ${content.terminalId}`),
          ),
          part.result ? el('pre', { class: `result${part.result.isError ? ' error' : ''}` }, part.result.content) : null,
        );
      }
      case 'plan':
        return el('div', { class: 'plan', role: 'list', 'aria-label': 'Plan' },
          ...part.entries.map((entry) => el('div', { class: `plan-entry ${entry.status}`, role: 'listitem' },
            el('span', { class: 'plan-mark', 'aria-hidden': 'true' }, entry.status === 'completed' ? '✓' : entry.status === 'inProgress' ? '◐' : '○'),
            el('span', null, entry.content),
            el('span', { class: 'visually-hidden' }, ` (${entry.status})`),
          )),
        );
      case 'proposal':
        return this.renderProposal(part.proposalId, part.summary);
      case 'permissionRequest':
        return this.renderPermission(turn, part);
      case 'error':
        return errorNotice(part.message);
      case 'notice':
        return el('div', { class: 'notice info', role: 'status' }, part.message);
      case 'compaction':
        // The raw turns stay shown and searchable; the summary is what the model now reads.
        return el('details', { class: 'compaction' },
          el('summary', null, compactionNote(turn) ?? 'Earlier turns summarised'),
          part.summary ? el('div', { class: 'markdown' }, renderMarkdown(part.summary)) : null,
        );
      default:
        return document.createTextNode('');
    }
  }

  /**
   * @param {Turn} turn
   * @param {Extract<ResponsePart, {type: 'permissionRequest'}>} part
   */
  renderPermission(turn, part) {
    // The agent's words are isolated (<bdi>), so a direction override in them cannot
    // reorder what Hearth writes around them.
    const card = el('div', { class: 'card permission', role: 'group', 'aria-label': `Permission: ${part.title}`, dataset: { request: part.requestId } },
      el('div', { class: 'card-title' }, 'The agent asks: ', el('strong', null, el('bdi', null, part.title))),
    );
    // A question the agent asks the user (elicitation) is about no tool call.
    const question = !part.toolCallId;
    if (part.outcome) {
      const chosen = part.options.find((option) => option.id === part.outcome);
      card.append(el('p', { class: 'muted' }, 'Answered: ', ...(chosen ? optionText(chosen, question) : [el('bdi', null, part.outcome)])));
      return card;
    }
    const error = el('p', { class: 'card-error', role: 'alert', hidden: true });
    // Each button says what it does in Hearth's words (from the option's kind); the
    // agent's label follows, smaller: it can neither hide nor reword the choice.
    const buttons = part.options.map((option) =>
      el('button', {
        type: 'button',
        class: `button ${option.kind && option.kind.startsWith('reject') ? 'danger' : 'primary'}`,
        'aria-label': `${optionEffect(option.kind, question)} (the agent's label: ${option.label})`,
        onclick: async () => {
          if (!this.chatUri) return;
          for (const button of buttons) button.disabled = true;
          try {
            await this.rpc.call('permission/respond', { chat: this.chatUri, requestId: part.requestId, optionId: option.id });
          } catch (failure) {
            error.textContent = message(failure);
            error.hidden = false;
            for (const button of buttons) button.disabled = false;
          }
        },
      }, ...optionText(option, question)),
    );
    card.append(el('div', { class: 'card-actions' }, ...buttons), error);
    return card;
  }

  /**
   * @param {string} id
   * @param {string} summary
   */
  renderProposal(id, summary) {
    const proposal = this.proposals.get(id);
    return proposalCard(this.rpc, id, summary, proposal, (updated) => {
      this.proposals.set(updated.id, updated);
      this.renderAll();
    });
  }

  /**
   * Copy and regenerate under an answer: regenerate on the last turn only, when nothing runs.
   * @param {Turn} turn
   * @returns {HTMLElement[]}
   */
  answerActions(turn) {
    const text = answerText(turn);
    const buttons = text ? [copyButton('Copy the answer', () => text)] : [];
    const last = this.chat?.turns[this.chat.turns.length - 1];
    if (last?.id === turn.id && !this.running()) {
      buttons.push(el('button', {
        class: 'button subtle small regenerate',
        type: 'button',
        title: 'Ask again: the same message as a new turn',
        onclick: () => this.regenerate(turn),
      }, icon('retry'), 'Regenerate'));
    }
    return buttons;
  }

  /** @param {Turn} turn */
  async regenerate(turn) {
    if (!this.chatUri || this.running()) return;
    this.showError('');
    try {
      await this.rpc.call('chat/queue', { chat: this.chatUri, message: turn.user });
    } catch (error) {
      this.showError(`Could not regenerate: ${message(error)}`);
    }
  }

  /**
   * Turns a sent message into an editor; sending it forks the chat before that turn.
   * @param {Turn} turn
   */
  editTurn(turn) {
    const node = this.turnElements.get(turn.id);
    const bubble = node?.querySelector('.message.user');
    if (!bubble) return;
    const area = el('textarea', { class: 'composer-input edit-input', rows: 3, 'aria-label': 'Edited message' });
    area.value = turn.user.text;
    const error = el('p', { class: 'card-error', role: 'alert', hidden: true });
    const cancel = () => this.renderAll();
    const editor = el('form', {
      class: 'edit-message',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        const text = area.value.trim();
        if (!text) return;
        try {
          await this.resendEdited(turn, text);
        } catch (failure) {
          error.textContent = `Could not send the edit: ${message(failure)}`;
          error.hidden = false;
        }
      },
      onkeydown: (/** @type {KeyboardEvent} */ event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          event.stopPropagation();
          cancel();
        }
      },
    },
      area,
      error,
      el('div', { class: 'edit-actions' },
        el('button', { class: 'button subtle small', type: 'button', onclick: cancel }, 'Cancel'),
        el('button', { class: 'button primary small', type: 'submit' }, 'Send as a new branch'),
      ),
    );
    bubble.replaceWith(editor);
    area.focus();
  }

  /**
   * Sends an edited message as a branch: a chat of this session forked at the turn
   * before (the agent's own fork), else a new session forked there. The old branch stays.
   * @param {Turn} turn
   * @param {string} text
   */
  async resendEdited(turn, text) {
    if (!this.chatUri || !this.chat || !this.session) return;
    let index = this.chat.turns.findIndex((candidate) => candidate.id === turn.id);
    while (index === 0 && this.olderTurns) {
      await this.loadOlder();
      index = this.chat.turns.findIndex((candidate) => candidate.id === turn.id);
    }
    const previous = index > 0 ? this.chat.turns[index - 1] : null;
    const edited = { ...turn.user, text };
    const harness = this.host.harnessOf(this.session.summary.harness ?? '');
    if (harness?.capabilities.multipleChats?.fork) {
      const seed = previous ? { type: 'fork', sourceChat: this.chatUri, turnId: previous.id } : { type: 'fresh' };
      const created = await this.rpc.call('chat/create', { session: this.uri, seed: /** @type {any} */ (seed) });
      await this.rpc.call('chat/queue', { chat: created.chat.uri, message: edited });
      this.showChat(created.chat.uri);
      return;
    }
    const scope = this.session.summary.scope;
    const created = previous
      ? await this.rpc.call('session/fork', { session: this.uri, turnId: previous.id })
      : await this.rpc.call('session/create', {
        harness: this.session.summary.harness ?? undefined,
        projectId: scope.type === 'project' ? scope.projectId : undefined,
        workingDirectories: this.session.summary.workingDirectories ?? [],
      });
    const chat = created.session.chats[0]?.summary.uri;
    if (chat) await this.rpc.call('chat/queue', { chat, message: edited });
    this.host.openSession(created.session.summary.uri);
    this.renderAll();
  }

  /** @param {Turn} turn */
  async fork(turn) {
    try {
      const created = await this.rpc.call('session/fork', { session: this.uri, turnId: turn.id });
      this.host.openSession(created.session.summary.uri);
    } catch (error) {
      this.showError(`Could not fork: ${message(error)}`);
    }
  }

  /** @param {Turn} turn */
  async sideChat(turn) {
    if (!this.chatUri) return;
    try {
      const created = await this.rpc.call('chat/create', {
        session: this.uri,
        seed: { type: 'sideChat', sourceChat: this.chatUri, turnId: turn.id },
      });
      this.branchTurns.set(created.chat.uri, structuredClone(turn));
      this.showChat(created.chat.uri);
    } catch (error) {
      this.showError(`Could not open a side chat: ${message(error)}`);
    }
  }

  /** Stops listening; a draft not yet saved is saved first (it stays with its chat). */
  close() {
    this.flushDraft();
    this.closed = true;
    if (this.chatUri) this.rpc.unsubscribe(this.chatUri);
    this.rpc.unsubscribe(this.uri);
    this.element.remove();
  }
}

/**
 * A proposal's card: what it changes, and approve/reject bound to the hash shown.
 * @param {Rpc} rpc
 * @param {string} id
 * @param {string} summary
 * @param {Proposal | undefined} proposal
 * @param {(proposal: Proposal) => void} decided
 */
export function proposalCard(rpc, id, summary, proposal, decided) {
  const card = el('div', { class: 'card proposal', role: 'group', 'aria-label': `Proposal: ${summary}`, dataset: { proposal: id } },
    el('div', { class: 'card-title' }, 'Proposed change: ', el('strong', null, summary)),
  );
  if (!proposal) {
    card.append(el('p', { class: 'muted' }, 'Loading the change…'));
    return card;
  }
  card.dataset.hash = proposal.payloadHash;
  card.append(diffView(proposal.diff));
  card.append(el('p', { class: 'muted hash' }, `Change ${proposal.payloadHash.slice(0, 12)} · ${proposal.tool}`));
  if (proposal.status !== 'pending') {
    card.append(el('p', { class: `status ${proposal.status}` }, statusText(proposal)));
    return card;
  }
  const error = el('p', { class: 'card-error', role: 'alert', hidden: true });
  const shownHash = proposal.payloadHash;
  /** @param {'approve' | 'reject'} decision */
  const decide = async (decision) => {
    approve.disabled = true;
    reject.disabled = true;
    try {
      const answer = decision === 'approve'
        ? await rpc.call('proposal/approve', { proposalId: id, payloadHash: shownHash })
        : await rpc.call('proposal/reject', { proposalId: id });
      decided(answer.proposal);
    } catch (failure) {
      error.textContent = message(failure);
      error.hidden = false;
      approve.disabled = false;
      reject.disabled = false;
    }
  };
  const approve = el('button', { type: 'button', class: 'button primary', onclick: () => decide('approve') }, 'Approve');
  const reject = el('button', { type: 'button', class: 'button danger', onclick: () => decide('reject') }, 'Reject');
  card.append(el('div', { class: 'card-actions' }, approve, reject), error);
  return card;
}

/**
 * A failure as a user reads it: what happened, a way to Setup when that is where it is
 * fixed, and the original text under "Details".
 * @param {string} text
 */
export function errorNotice(text) {
  const explained = explainError(text);
  return el('div', { class: 'notice error', role: 'alert' },
    el('p', { class: 'error-summary' }, explained.summary),
    explained.setup ? el('a', { class: 'button small setup-link', href: '#/setup' }, 'Open Setup') : null,
    explained.summary !== explained.detail ? el('details', { class: 'error-detail' }, el('summary', null, 'Details'), el('pre', null, explained.detail)) : null,
  );
}

/** @param {Proposal} proposal */
export function statusText(proposal) {
  switch (proposal.status) {
    case 'applied':
      return `Applied${proposal.decidedBy ? ` (approved by ${proposal.decidedBy})` : ''}.`;
    case 'rejected':
      return `Rejected${proposal.reason ? `: ${proposal.reason}` : ''}.`;
    case 'failed':
      return `Approved, but applying it failed: ${proposal.error || 'unknown error'}`;
    case 'expired':
      return 'Expired without a decision.';
    default:
      return String(proposal.status);
  }
}

/**
 * What a turn's usage says, in one line: tokens, the context window, the cost — each part
 * only when reported.
 * @param {import('../../protocol').Usage} usage
 */
export function usageText(usage) {
  const parts = [];
  if (usage.inputTokens || usage.outputTokens) parts.push(`${usage.inputTokens} in · ${usage.outputTokens} out`);
  if (usage.contextUsed != null) {
    parts.push(usage.contextSize != null ? `context ${usage.contextUsed}/${usage.contextSize}` : `context ${usage.contextUsed}`);
  }
  if (usage.cost) parts.push(`cost ${usage.cost.amount} ${usage.cost.currency}`);
  return parts.join(' · ');
}
