// The page's app-server client: JSON-RPC over the WebSocket of the server that served the
// page. The capability token goes as a subprotocol (browsers cannot set an Authorization
// header on a WebSocket); the socket reconnects with backoff when it drops.

const APP_PROTOCOL = 'troupe.app-server';

function tokenProtocol(token) {
  const hex = Array.from(new TextEncoder().encode(token), (b) => b.toString(16).padStart(2, '0'));
  return `troupe.token.${hex.join('')}`;
}

export class Rpc {
  constructor({ url, token, onNotification, onRequest, onState }) {
    this.url = url;
    this.token = token;
    this.onNotification = onNotification;
    this.onRequest = onRequest;
    this.onState = onState;
    this.nextId = 1;
    this.pending = new Map();
    this.socket = null;
    this.retryMs = 250;
    this.closedByUs = false;
    this.everOpened = false;
  }

  connect() {
    this.onState('connecting');
    let socket;
    try {
      socket = new WebSocket(this.url, [APP_PROTOCOL, tokenProtocol(this.token)]);
    } catch (err) {
      this.onState('failed', String(err));
      return;
    }
    this.socket = socket;
    socket.addEventListener('open', () => this.opened());
    socket.addEventListener('message', (event) => this.received(event.data));
    socket.addEventListener('close', () => this.closed(socket));
  }

  async opened() {
    this.retryMs = 250;
    try {
      // What the server says of itself (`codexHome`: where the page finds the user's home).
      this.server = await this.call('initialize', {
        clientInfo: { name: 'troupe-web', title: 'Troupe supervisor page', version: '0.1.0' },
      });
      this.notify('initialized');
      this.everOpened = true;
      this.onState('open');
    } catch (err) {
      this.onState('failed', err.message);
    }
  }

  closed(socket) {
    if (socket !== this.socket) return;
    for (const { reject } of this.pending.values()) reject(new Error('connection lost'));
    this.pending.clear();
    this.socket = null;
    if (this.closedByUs) return;
    if (!this.everOpened) {
      // Never got in: a wrong token or origin is refused at the handshake; retrying won't help.
      this.onState('refused');
      return;
    }
    this.onState('reconnecting');
    setTimeout(() => this.connect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, 5000);
  }

  /** Drops the socket as a network failure would (the page reconnects and resumes). */
  dropForTest() {
    this.socket?.close();
  }

  received(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (message.method !== undefined && message.id !== undefined) {
      this.onRequest(message);
    } else if (message.method !== undefined) {
      this.onNotification(message);
    } else if (this.pending.has(message.id)) {
      const { resolve, reject } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
    }
  }

  call(method, params) {
    // String ids: a server request's id (a number) can never be mistaken for one of ours.
    const id = `web-${this.nextId++}`;
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
        reject(new Error('not connected'));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  notify(method, params) {
    this.socket?.send(JSON.stringify(params === undefined ? { method } : { method, params }));
  }

  /** Answers a server request (an approval). */
  answer(id, result) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify({ id, result }));
    return true;
  }
}
