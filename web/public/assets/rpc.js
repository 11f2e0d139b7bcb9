// @ts-check
// The connection to Hearth: JSON-RPC 2.0 over the `/rpc` WebSocket, the same protocol
// every other client speaks. Requests wait while the socket is down; subscriptions are
// renewed after a reconnect with their last seq, so the server sends the missed
// envelopes or a fresh snapshot.

/** @typedef {import('../../protocol').Envelope} Envelope */
/** @typedef {import('../../protocol').Snapshot} Snapshot */
/** @typedef {import('../../protocol').SubscribeResponse} SubscribeResponse */
/** @typedef {import('../../protocol').Methods} Methods */

/**
 * What a subscriber is told.
 * @typedef {{type: 'snapshot', snapshot: Snapshot}
 *   | {type: 'envelope', envelope: Envelope}
 *   | {type: 'ended', reason: string}} Delivery
 */

/** @typedef {'connecting' | 'open' | 'offline' | 'login' | 'restarted'} Status */

// The browser session: kept in this origin's storage (no other port or site can read it)
// and sent by the page itself, as a header on fetches and in the WebSocket's protocol
// offer; never a cookie, which a browser would hand to every port of this host.
const SESSION_KEY = 'hearth.session';
const SESSION_HEADER = 'X-Hearth-Session';
const RPC_PROTOCOL = 'hearth.rpc';
const SESSION_PROTOCOL_PREFIX = 'hearth.session.';

/**
 * Takes the one-time login code a login link leaves in the address (`#login=…`), and
 * removes it from there (and from the history) before anything else reads the address.
 * @returns {string | null}
 */
function takeLoginCode() {
  const match = /^#login=([0-9a-f]+)$/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return match[1];
}

/** An error the server answered with. */
export class RpcError extends Error {
  /**
   * @param {string} message
   * @param {number} code
   * @param {unknown} [data]
   */
  constructor(message, code, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/**
 * @typedef {object} Subscription
 * @property {(delivery: Delivery) => void} deliver
 * @property {number} seq the last seq applied; 0 before the first snapshot
 * @property {number | undefined} turnLimit
 */

export class Rpc {
  /** @param {(status: Status, detail?: string) => void} onStatus */
  constructor(onStatus) {
    this.onStatus = onStatus;
    /** @type {WebSocket | null} */
    this.socket = null;
    this.nextId = 1;
    /** @type {Map<number, {resolve: (value: any) => void, reject: (error: Error) => void, method: string}>} */
    this.pending = new Map();
    /** @type {Map<string, Subscription>} */
    this.subscriptions = new Map();
    /** @type {Array<() => void>} */
    this.waiting = [];
    this.open = false;
    this.backoff = 250;
    /** @type {string | null} the server's version, to tell a restart */
    this.serverStarted = null;
    /** @type {import('../../protocol').InitializeResponse | null} */
    this.server = null;
    this.everOpened = false;
    /** @type {string | null} a login link's code, to trade for a session */
    this.loginCode = takeLoginCode();
    this.needsLogin = false;
    // Logging in in another tab of this origin logs this one in too.
    window.addEventListener('storage', (event) => {
      if (event.key === SESSION_KEY && event.newValue && this.needsLogin) this.connect();
    });
  }

  /** Connects (again). */
  async connect() {
    this.needsLogin = false;
    this.onStatus(this.everOpened ? 'offline' : 'connecting');
    let session;
    try {
      session = await this.session();
    } catch {
      this.retry();
      return;
    }
    if (!session) {
      this.needsLogin = true;
      this.onStatus('login');
      return;
    }
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/rpc`, [RPC_PROTOCOL, SESSION_PROTOCOL_PREFIX + session]);
    this.socket = socket;
    socket.onopen = () => this.opened();
    socket.onmessage = (event) => this.received(String(event.data));
    socket.onclose = () => this.closed(socket);
    socket.onerror = () => {};
  }

  /**
   * The browser session: a login link's code traded for a new one, or the one kept if
   * the server still accepts it; `null` when this browser must log in. Throws when the
   * server cannot be reached.
   * @returns {Promise<string | null>}
   */
  async session() {
    const code = this.loginCode;
    if (code) {
      const response = await fetch('/auth/session', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ code }),
        credentials: 'omit',
        cache: 'no-store',
      });
      // Answered: the code is spent either way.
      this.loginCode = null;
      if (response.ok) {
        const session = String((await response.json()).session);
        localStorage.setItem(SESSION_KEY, session);
        return session;
      }
    }
    const kept = localStorage.getItem(SESSION_KEY);
    if (!kept) return null;
    const response = await fetch('/auth/session', {
      headers: { [SESSION_HEADER]: kept },
      credentials: 'omit',
      cache: 'no-store',
    });
    if (response.status === 401) {
      // Expired or ended (`hearth login --revoke`), unless another tab logged in since.
      if (localStorage.getItem(SESSION_KEY) === kept) localStorage.removeItem(SESSION_KEY);
      return null;
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return kept;
  }

  async opened() {
    this.open = true;
    this.backoff = 250;
    const reconnected = this.everOpened;
    this.everOpened = true;
    try {
      const server = await this.send('initialize', {
        clientInfo: { name: 'agent-home', version: '1' },
      });
      this.server = server;
    } catch (error) {
      this.onStatus('offline', String(error));
      return;
    }
    for (const wake of this.waiting.splice(0)) wake();
    for (const [resource, subscription] of this.subscriptions) {
      this.renew(resource, subscription);
    }
    this.onStatus(reconnected ? 'restarted' : 'open');
  }

  /** @param {WebSocket} socket */
  closed(socket) {
    if (this.socket !== socket) return;
    this.open = false;
    this.socket = null;
    for (const [, call] of this.pending) {
      call.reject(new RpcError('the connection to Hearth closed; the request may not have run', -32000));
    }
    this.pending.clear();
    this.retry();
  }

  retry() {
    this.onStatus(this.everOpened ? 'offline' : 'connecting');
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, 4000);
    setTimeout(() => this.connect(), delay);
  }

  /** @param {string} text */
  received(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.id !== undefined && message.id !== null && !message.method) {
      const call = this.pending.get(message.id);
      if (!call) return;
      this.pending.delete(message.id);
      if (message.error) {
        call.reject(new RpcError(message.error.message, message.error.code, message.error.data));
      } else {
        call.resolve(message.result);
      }
      return;
    }
    const params = message.params;
    switch (message.method) {
      case 'subscription/envelope': {
        const subscription = this.subscriptions.get(params.resource);
        if (!subscription) return;
        if (subscription.seq && params.seq !== subscription.seq + 1) {
          // A gap: ask again from the last seq applied.
          this.renew(params.resource, subscription);
          return;
        }
        subscription.seq = params.seq;
        subscription.deliver({ type: 'envelope', envelope: params });
        return;
      }
      case 'subscription/resync': {
        const subscription = this.subscriptions.get(params.snapshot.resource);
        if (!subscription) return;
        subscription.seq = params.snapshot.seq;
        subscription.deliver({ type: 'snapshot', snapshot: params.snapshot });
        return;
      }
      case 'subscription/ended': {
        const subscription = this.subscriptions.get(params.resource);
        if (!subscription) return;
        this.subscriptions.delete(params.resource);
        subscription.deliver({ type: 'ended', reason: params.reason });
        return;
      }
      default:
    }
  }

  /**
   * Sends a request once the socket is open.
   * @template {keyof Methods} M
   * @param {M} method
   * @param {Methods[M]['params']} params
   * @returns {Promise<Methods[M]['result']>}
   */
  async call(method, params) {
    if (!this.open) {
      await new Promise((resolve) => this.waiting.push(() => resolve(undefined)));
    }
    return this.send(method, params);
  }

  /**
   * @param {string} method
   * @param {unknown} params
   * @returns {Promise<any>}
   */
  send(method, params) {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new RpcError('not connected to Hearth', -32000));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /**
   * Subscribes to a resource; `deliver` gets its snapshot, then every envelope, also
   * across reconnects.
   * @param {string} resource
   * @param {(delivery: Delivery) => void} deliver
   * @param {{turnLimit?: number}} [options]
   */
  subscribe(resource, deliver, options = {}) {
    const subscription = { deliver, seq: 0, turnLimit: options.turnLimit };
    this.subscriptions.set(resource, subscription);
    if (this.open) this.renew(resource, subscription);
  }

  /** @param {string} resource */
  unsubscribe(resource) {
    if (!this.subscriptions.delete(resource)) return;
    if (this.open) this.send('unsubscribe', { resource }).catch(() => {});
  }

  /**
   * @param {string} resource
   * @param {Subscription} subscription
   */
  async renew(resource, subscription) {
    /** @type {import('../../protocol').SubscribeParams} */
    const params = { resource };
    if (subscription.seq) params.lastSeq = subscription.seq;
    if (subscription.turnLimit) params.turnLimit = subscription.turnLimit;
    let answer;
    try {
      answer = /** @type {SubscribeResponse} */ (await this.send('subscribe', params));
    } catch (error) {
      if (this.subscriptions.get(resource) !== subscription) return;
      if (error instanceof RpcError && error.code !== -32000) {
        this.subscriptions.delete(resource);
        subscription.deliver({ type: 'ended', reason: error.message });
      }
      return;
    }
    if (this.subscriptions.get(resource) !== subscription) return;
    if (answer.type === 'snapshot') {
      subscription.seq = answer.snapshot.seq;
      subscription.deliver({ type: 'snapshot', snapshot: answer.snapshot });
    } else {
      for (const envelope of answer.envelopes) {
        if (envelope.seq <= subscription.seq) continue;
        subscription.seq = envelope.seq;
        subscription.deliver({ type: 'envelope', envelope });
      }
    }
  }
}
