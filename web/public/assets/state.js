// @ts-check
// Folding action envelopes into a session's or a chat's state: the same reducer the
// host runs (hearth-core's state.rs), so the page shows what the store holds.

/** @typedef {import('../../protocol').Action} Action */
/** @typedef {import('../../protocol').ChatState} ChatState */
/** @typedef {import('../../protocol').SessionState} SessionState */
/** @typedef {import('../../protocol').Turn} Turn */
/** @typedef {import('../../protocol').ResponsePart} ResponsePart */
/** @typedef {import('../../protocol').ToolCallPart} ToolCallPart */

/**
 * A turn's response parts (a turn read without any gets an empty list).
 * @param {Turn} turn
 * @returns {ResponsePart[]}
 */
export function partsOf(turn) {
  return (turn.parts ??= []);
}

/**
 * What the agent answered in a turn, as text: its text parts, in order, a blank line
 * between them (reasoning, tool calls and cards are not the answer).
 * @param {Turn} turn
 * @returns {string}
 */
export function answerText(turn) {
  return partsOf(turn)
    .flatMap((part) => (part.type === 'text' && part.text.trim() ? [part.text.trim()] : []))
    .join('\n\n');
}

/**
 * @param {SessionState} state
 * @param {Action} action
 */
export function reduceSession(state, action) {
  switch (action.type) {
    case 'sessionUpdated':
      if (action.summary.uri === state.summary.uri) state.summary = action.summary;
      break;
    case 'chatAdded': {
      const existing = state.chats.find((c) => c.summary.uri === action.chat.uri);
      if (existing) existing.summary = action.chat;
      else state.chats.push({ summary: action.chat, running: false });
      break;
    }
    case 'chatUpdated': {
      const existing = state.chats.find((c) => c.summary.uri === action.chat.uri);
      if (existing) existing.summary = action.chat;
      break;
    }
    case 'chatRemoved':
      state.chats = state.chats.filter((c) => c.summary.uri !== action.chat);
      break;
    case 'chatActivity': {
      const existing = state.chats.find((c) => c.summary.uri === action.chat);
      if (existing) existing.running = action.running;
      break;
    }
    default:
  }
}

/**
 * @param {ChatState} state
 * @param {string} id
 * @returns {Turn | undefined}
 */
function turnOf(state, id) {
  for (let index = state.turns.length - 1; index >= 0; index--) {
    if (state.turns[index].id === id) return state.turns[index];
  }
  return undefined;
}

/**
 * @param {Turn} turn
 * @param {string} id
 * @returns {ToolCallPart | undefined}
 */
function toolCallOf(turn, id) {
  for (let index = partsOf(turn).length - 1; index >= 0; index--) {
    const part = partsOf(turn)[index];
    if (part.type === 'toolCall' && part.callId === id) return part;
  }
  return undefined;
}

/**
 * Applies an action to a chat's state; returns the id of the turn it changed, if any.
 * @param {ChatState} state
 * @param {Action} action
 * @returns {string | null}
 */
export function reduceChat(state, action) {
  switch (action.type) {
    case 'chatUpdated':
      if (action.chat.uri === state.summary.uri) state.summary = action.chat;
      return null;
    case 'turnStarted':
      if (!turnOf(state, action.turn.id)) state.turns.push(structuredClone(action.turn));
      return action.turn.id;
    case 'textDelta':
    case 'reasoningDelta': {
      const turn = turnOf(state, action.turnId);
      if (!turn) return null;
      const kind = action.type === 'textDelta' ? 'text' : 'reasoning';
      const last = partsOf(turn)[partsOf(turn).length - 1];
      if (last && last.type === kind) last.text += action.text;
      else partsOf(turn).push({ type: kind, text: action.text });
      return turn.id;
    }
    case 'toolCallStarted': {
      const turn = turnOf(state, action.turnId);
      if (!turn) return null;
      const existing = toolCallOf(turn, action.call.callId);
      if (existing) Object.assign(existing, action.call);
      else partsOf(turn).push({ type: 'toolCall', ...action.call });
      return turn.id;
    }
    case 'toolCallUpdated': {
      const turn = turnOf(state, action.turnId);
      const call = turn && toolCallOf(turn, action.callId);
      if (!turn || !call) return null;
      call.status = action.status;
      if (action.result) call.result = action.result;
      const patch = action.patch || {};
      if (patch.title !== undefined && patch.title !== null) call.title = patch.title;
      if (patch.kind !== undefined && patch.kind !== null) call.kind = patch.kind;
      if (patch.locations) call.locations = patch.locations;
      if (patch.content) call.content = patch.content;
      if (patch.arguments !== undefined && patch.arguments !== null) call.arguments = patch.arguments;
      return turn.id;
    }
    case 'planUpdated': {
      const turn = turnOf(state, action.turnId);
      if (!turn) return null;
      const plan = partsOf(turn).find((part) => part.type === 'plan');
      if (plan && plan.type === 'plan') plan.entries = action.entries;
      else partsOf(turn).push({ type: 'plan', entries: action.entries });
      return turn.id;
    }
    case 'partAdded': {
      const turn = turnOf(state, action.turnId);
      if (!turn) return null;
      partsOf(turn).push(structuredClone(action.part));
      return turn.id;
    }
    case 'permissionResolved': {
      const turn = turnOf(state, action.turnId);
      if (!turn) return null;
      for (const part of partsOf(turn)) {
        if (part.type === 'permissionRequest' && part.requestId === action.requestId) {
          part.outcome = action.outcome;
        }
      }
      return turn.id;
    }
    case 'usageUpdated': {
      const turn = turnOf(state, action.turnId);
      if (!turn) return null;
      turn.usage = action.usage;
      return turn.id;
    }
    case 'turnCompleted': {
      const turn = turnOf(state, action.turnId);
      if (!turn) return null;
      turn.stopReason = action.stopReason;
      turn.completedAt = action.completedAt;
      if (action.usage) turn.usage = action.usage;
      const unanswered = action.stopReason === 'incomplete' ? 'expired' : 'cancelled';
      for (const part of partsOf(turn)) {
        if (part.type === 'toolCall' && (part.status === 'pending' || part.status === 'running')) {
          part.status = 'cancelled';
        }
        if (part.type === 'permissionRequest' && !part.outcome) part.outcome = unanswered;
      }
      return turn.id;
    }
    case 'agentStateChanged':
      state.agent = action.state;
      return null;
    case 'draftChanged':
      state.draft = action.draft ?? null;
      return null;
    case 'queueChanged':
      state.queued = action.queued ?? [];
      return null;
    default:
      return null;
  }
}

/**
 * The permission request of a chat nobody answered yet, if any.
 * @param {ChatState} state
 */
export function pendingPermission(state) {
  const turn = state.turns[state.turns.length - 1];
  if (!turn || turn.stopReason) return null;
  for (const part of partsOf(turn)) {
    if (part.type === 'permissionRequest' && !part.outcome) return { turn, part };
  }
  return null;
}

/**
 * The note that marks a turn in which the agent summarised the chat's earlier turns to fit
 * its context window ("Earlier turns summarised (12 turns)"), or null. The earlier turns
 * themselves stay in the chat.
 * @param {Turn} turn
 */
export function compactionNote(turn) {
  const part = partsOf(turn).find((part) => part.type === 'compaction');
  if (!part || part.type !== 'compaction') return null;
  if (part.turns == null) return 'Earlier turns summarised';
  return `Earlier turns summarised (${part.turns} ${part.turns === 1 ? 'turn' : 'turns'})`;
}

/**
 * Whether a turn of the chat is running.
 * @param {ChatState} state
 */
export function isRunning(state) {
  const turn = state.turns[state.turns.length - 1];
  return Boolean(turn && !turn.stopReason);
}
