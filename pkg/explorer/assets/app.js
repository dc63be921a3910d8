// ferry explorer: a client of ferry serve's public interfaces. It reads the
// chain nodes' JSON-RPC, subscribes to their PubSub websockets, and asks
// /explorer/api/ for what only ferry's Go code knows (explanations and
// decoded layouts). No framework, no third-party resource; the only state
// kept is the pinned addresses (localStorage) and, in memory only, a login
// token the user pastes to read their private rollup balances.
'use strict';

const cfg = JSON.parse(document.body.dataset.config);
const view = document.getElementById('view');
const statusEl = document.getElementById('status');
const PINS_KEY = 'ferry.explorer.pins';
const MAX_PINS = 20;
const LAMPORTS = 9;

// The login token (a ferry login response, "<wallet>.<token>"), in memory
// only: it never reaches localStorage, the explorer's own endpoints or a
// URL the page shows.
let token = '';

// ---- DOM helpers: every text goes through textContent.

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function short(s) { return s && s.length > 16 ? s.slice(0, 6) + '…' + s.slice(-6) : s; }

function acctLink(addr, label) {
  return h('a', { class: 'mono', href: '#/account/' + addr, title: addr }, label || short(addr));
}

function txLink(sig, layer) {
  return h('a', { class: 'mono', href: '#/tx/' + sig + (layer ? '?layer=' + layer : ''), title: sig }, short(sig));
}

function badge(text, kind) { return h('span', { class: 'badge ' + (kind || text) }, text); }

function uiAmount(raw, decimals) {
  let s = String(raw);
  const neg = s.startsWith('-');
  if (neg || s.startsWith('+')) s = s.slice(1);
  if (!decimals) return (neg ? '-' : '') + s;
  s = s.padStart(decimals + 1, '0');
  const whole = s.slice(0, -decimals);
  const frac = s.slice(-decimals).replace(/0+$/, '');
  return (neg ? '-' : '') + whole + (frac ? '.' + frac : '');
}

function sol(lamports) { return uiAmount(lamports, LAMPORTS) + ' SOL'; }

function when(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  const diff = Math.round((ms - Date.now()) / 1000);
  const rel = diff === 0 ? 'now' : diff > 0 ? 'in ' + diff + ' s' : -diff + ' s ago';
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') + ' (' + rel + ')';
}

function table(headers, rows, cls) {
  return h('div', { class: 'scroll' }, h('table', { class: cls || '' },
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows)));
}

function setStatus(text, kind) {
  statusEl.textContent = text;
  statusEl.className = 'status ' + (kind || '');
}

// ---- JSON-RPC and the explorer's endpoints.

function nodeURL(layer) {
  const base = layer === 'ephemeral' ? cfg.endpoints.ephemeral : cfg.endpoints.rpc;
  if (layer === 'ephemeral' && token) return base + '/?token=' + encodeURIComponent(token);
  return base;
}

let rpcId = 0;

// rpcBatch sends one JSON-RPC batch to a node; each result is
// {result} or {error}.
async function rpcBatch(layer, calls) {
  if (calls.length === 0) return [];
  const body = calls.map(([method, params]) => ({ jsonrpc: '2.0', id: ++rpcId, method, params }));
  const resp = await fetch(nodeURL(layer), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const out = await resp.json();
  const byId = new Map((Array.isArray(out) ? out : [out]).map((r) => [r.id, r]));
  return body.map((b) => byId.get(b.id) || { error: { code: -1, message: 'no answer' } });
}

async function rpc(layer, method, params) {
  const [r] = await rpcBatch(layer, [[method, params]]);
  if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code });
  return r.result;
}

async function api(path, params) {
  const u = new URL(path, location.href);
  for (const [k, v] of Object.entries(params || {})) if (v) u.searchParams.set(k, v);
  const resp = await fetch(u);
  const body = await resp.json();
  if (!resp.ok) throw new Error((body.error && body.error.message) || resp.statusText);
  return body;
}

// ---- PubSub: one websocket per node, re-opened when the token changes.

class Socket {
  constructor(layer) {
    this.layer = layer;
    this.pending = new Map(); // request id -> {resolve, reject}
    this.handlers = new Map(); // subscription id -> handler
    this.subs = new Set(); // active Subscription objects, re-sent on reconnect
    this.ws = null;
    this.opened = null;
    this.retry = 0;
    this.connect();
  }

  url() {
    const base = this.layer === 'ephemeral' ? cfg.endpoints.ephemeralWs : cfg.endpoints.rpcWs;
    return this.layer === 'ephemeral' && token ? base + '/?token=' + encodeURIComponent(token) : base;
  }

  connect() {
    const ws = new WebSocket(this.url());
    this.ws = ws;
    this.opened = new Promise((resolve) => ws.addEventListener('open', () => resolve(), { once: true }));
    ws.addEventListener('open', () => {
      this.retry = 0;
      sockets.changed();
      for (const s of this.subs) this.send(s);
    });
    ws.addEventListener('message', (ev) => this.message(JSON.parse(ev.data)));
    ws.addEventListener('close', () => {
      if (this.ws !== ws) return;
      sockets.changed();
      this.handlers.clear();
      for (const p of this.pending.values()) p.reject(new Error('websocket closed'));
      this.pending.clear();
      const wait = Math.min(5000, 250 * 2 ** this.retry++);
      setTimeout(() => { if (this.ws === ws) this.connect(); }, wait);
    });
  }

  reconnect() {
    const old = this.ws;
    this.ws = null;
    if (old) old.close();
    this.handlers.clear();
    this.connect();
  }

  get open() { return this.ws && this.ws.readyState === WebSocket.OPEN; }

  message(m) {
    if (m.id !== undefined && this.pending.has(m.id)) {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error) p.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else p.resolve(m.result);
      return;
    }
    if (m.method && m.params) {
      const fn = this.handlers.get(m.params.subscription);
      if (fn) fn(m.params.result);
    }
  }

  request(method, params) {
    const id = ++rpcId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  async send(sub) {
    await this.opened;
    if (!this.subs.has(sub) || !this.open) return;
    try {
      const id = await this.request(sub.method, sub.params);
      if (!this.subs.has(sub)) {
        this.request(sub.method.replace('Subscribe', 'Unsubscribe'), [id]).catch(() => {});
        return;
      }
      sub.id = id;
      this.handlers.set(id, sub.handler);
    } catch (err) {
      if (sub.onError) sub.onError(err);
    }
  }

  subscribe(method, params, handler, onError) {
    const sub = { method, params, handler, onError, id: null };
    this.subs.add(sub);
    this.send(sub);
    return () => {
      this.subs.delete(sub);
      if (sub.id !== null && this.open) {
        this.handlers.delete(sub.id);
        this.request(method.replace('Subscribe', 'Unsubscribe'), [sub.id]).catch(() => {});
      }
    };
  }
}

const sockets = {
  base: null,
  ephemeral: null,
  changed() {
    const up = [this.base, this.ephemeral].filter((s) => s && s.open).length;
    if (up === 2) setStatus('live: subscribed to both chain nodes', 'ok');
    else setStatus('connecting to the chain nodes\' websockets…', 'warn');
  },
};
sockets.base = new Socket('base');
sockets.ephemeral = new Socket('ephemeral');

// Subscriptions of the current view; dropped when the view changes.
let viewSubs = [];
function sub(layer, method, params, handler, onError) {
  viewSubs.push(sockets[layer].subscribe(method, params, handler, onError));
}

function debounce(fn, ms) {
  let t = null;
  return () => {
    if (t) return;
    t = setTimeout(() => { t = null; fn(); }, ms);
  };
}

// ---- Chain statistics (header cards), live from slotsUpdatesSubscribe.

const chains = {
  base: { slot: 0, blockTime: 0, window: [] },
  ephemeral: { slot: 0, blockTime: 0, window: [] },
};
const TPS_WINDOW_MS = 10000;

for (const layer of ['base', 'ephemeral']) {
  sockets[layer].subscribe('slotsUpdatesSubscribe', [], (u) => {
    if (u.type !== 'frozen') return;
    const c = chains[layer];
    c.slot = Math.max(c.slot, u.slot);
    c.blockTime = u.timestamp;
    const n = u.stats ? u.stats.numSuccessfulTransactions + u.stats.numFailedTransactions : 0;
    c.window.push([u.timestamp, n]);
    while (c.window.length && c.window[0][0] < u.timestamp - TPS_WINDOW_MS) c.window.shift();
  });
}

// The first figures come from JSON-RPC; slotsUpdatesSubscribe keeps them
// live.
async function initChains() {
  for (const layer of ['base', 'ephemeral']) {
    try {
      const slot = await rpc(layer, 'getSlot', [{ commitment: 'confirmed' }]);
      const t = await rpc(layer, 'getBlockTime', [slot]);
      const c = chains[layer];
      if (slot > c.slot) { c.slot = slot; if (t) c.blockTime = t * 1000; }
    } catch (e) {
      setStatus(layer + ' node: ' + e.message, 'error');
    }
  }
  renderChains();
}
initChains();

function tps(layer) {
  const w = chains[layer].window;
  if (w.length < 2) return 0;
  const span = Math.max(1000, w[w.length - 1][0] - w[0][0]);
  return w.reduce((s, [, n]) => s + n, 0) / (span / 1000);
}

function renderChains() {
  for (const layer of ['base', 'ephemeral']) {
    const el = document.getElementById('chain-' + layer);
    if (!el) continue;
    const c = chains[layer];
    el.querySelector('.slot').textContent = c.slot ? String(c.slot) : '…';
    el.querySelector('.time').textContent = c.blockTime ? new Date(c.blockTime).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '…';
    el.querySelector('.tps').textContent = tps(layer).toFixed(1);
  }
}

// ---- Pins (localStorage, addresses only).

function pins() {
  try {
    const v = JSON.parse(localStorage.getItem(PINS_KEY) || '[]');
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string' && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(x)) : [];
  } catch { return []; }
}

function setPins(list) { localStorage.setItem(PINS_KEY, JSON.stringify(list.slice(0, MAX_PINS))); }

// ---- Overview.

// walletBalances reads a wallet's SOL and token balances on both layers
// (one batch per node). On the rollup a private balance is reported as
// {private: true}: the node answers -32090 unless the login token is the
// owner's.
async function walletBalances(addr) {
  const tokenCalls = (o) => [
    ['getTokenAccountsByOwner', [o, { programId: cfg.programs.token }, { encoding: 'jsonParsed', commitment: 'confirmed' }]],
    ['getTokenAccountsByOwner', [o, { programId: cfg.programs.token2022 }, { encoding: 'jsonParsed', commitment: 'confirmed' }]],
  ];
  const base = await rpcBatch('base', [['getBalance', [addr, { commitment: 'confirmed' }]], ...tokenCalls(addr)]);
  const baseTokens = [];
  for (const r of base.slice(1)) for (const a of (r.result && r.result.value) || []) baseTokens.push(a);
  const eph = await rpcBatch('ephemeral', [['getBalance', [addr, { commitment: 'confirmed' }]], ...tokenCalls(addr),
    ...baseTokens.map((a) => ['getAccountInfo', [a.pubkey, { encoding: 'jsonParsed', commitment: 'confirmed' }]])]);
  const tok = (a) => ({ account: a.pubkey, mint: a.account.data.parsed.info.mint, ui: a.account.data.parsed.info.tokenAmount.uiAmountString });
  const out = {
    base: { sol: base[0].result ? base[0].result.value : null, tokens: baseTokens.map(tok) },
    ephemeral: { sol: eph[0].result ? eph[0].result.value : null, tokens: [] },
  };
  const seen = new Set();
  for (const r of eph.slice(1, 3)) for (const a of (r.result && r.result.value) || []) { seen.add(a.pubkey); out.ephemeral.tokens.push(tok(a)); }
  eph.slice(3).forEach((r, i) => {
    const a = baseTokens[i];
    if (seen.has(a.pubkey)) return;
    if (r.error && r.error.code === -32090) out.ephemeral.tokens.push({ account: a.pubkey, mint: a.account.data.parsed.info.mint, private: true });
  });
  return out;
}

function tokenList(tokens) {
  if (tokens.length === 0) return h('span', { class: 'muted' }, 'no tokens');
  return h('span', {}, tokens.map((t) => h('span', { class: 'token', 'data-mint': t.mint },
    t.private ? badge('private', 'private') : h('b', {}, t.ui), ' ',
    t.mint === cfg.mint ? 'demo' : acctLink(t.mint),
    t.private ? h('span', { class: 'muted' }, ' visible to its owner') : null)));
}

function walletRow(w) {
  const row = h('tr', { 'data-address': w.address },
    h('td', {}, w.name || '', w.pinned ? h('button', { class: 'link unpin', title: 'unpin', onclick: () => { setPins(pins().filter((p) => p !== w.address)); route(); } }, '✕') : null),
    h('td', {}, acctLink(w.address)),
    h('td', { class: 'base-sol' }, '…'), h('td', { class: 'base-token' }, '…'),
    h('td', { class: 'eph-sol' }, '…'), h('td', { class: 'eph-token' }, '…'));
  const cells = (b) => {
    row.querySelector('.base-sol').textContent = b.base.sol === null ? '—' : sol(b.base.sol);
    row.querySelector('.eph-sol').textContent = b.ephemeral.sol === null ? '—' : sol(b.ephemeral.sol);
    row.querySelector('.base-token').replaceChildren(tokenList(b.base.tokens));
    row.querySelector('.eph-token').replaceChildren(tokenList(b.ephemeral.tokens));
  };
  const refresh = debounce(() => walletBalances(w.address).then((b) => { if (row.isConnected) cells(b); }).catch((e) => setStatus('balances of ' + w.address + ': ' + e.message, 'error')), 150);
  walletBalances(w.address).then((b) => {
    if (!row.isConnected) return; // the overview was left while it loaded
    cells(b);
    // Live: any change of the wallet or one of its token accounts.
    const watch = new Set([w.address, ...b.base.tokens.map((t) => t.account)]);
    for (const a of watch) {
      sub('base', 'accountSubscribe', [a, { commitment: 'confirmed', encoding: 'base64' }], refresh);
      sub('ephemeral', 'accountSubscribe', [a, { commitment: 'confirmed', encoding: 'base64' }], refresh, () => {});
    }
    // A deposit or transfer naming the wallet may create accounts the
    // subscriptions above do not cover yet.
    for (const layer of ['base', 'ephemeral']) sub(layer, 'logsSubscribe', [{ mentions: [w.address] }, { commitment: 'confirmed' }], refresh);
  }).catch((e) => setStatus('balances of ' + w.address + ': ' + e.message, 'error'));
  return row;
}

function chainCard(layer, title, url) {
  return h('div', { class: 'card', id: 'chain-' + layer },
    h('h2', {}, title), h('p', { class: 'muted mono' }, url),
    h('dl', {}, h('dt', {}, 'slot'), h('dd', { class: 'slot' }, '…'),
      h('dt', {}, 'block time'), h('dd', { class: 'time' }, '…'),
      h('dt', {}, 'transactions / s'), h('dd', { class: 'tps' }, '…')));
}

function loginBox() {
  const input = h('input', { type: 'password', id: 'token-input', placeholder: 'login token (ferry login, or POST /v1/spl/login)', autocomplete: 'off', maxlength: '2048' });
  const form = h('form', { class: 'login', id: 'login-form', onsubmit: (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
  } }, input, h('button', { type: 'submit' }, token ? 'Change' : 'Read as owner'),
  token ? h('button', { type: 'button', onclick: () => setToken('') }, 'Forget') : null);
  return h('details', { class: 'card', open: token ? true : null },
    h('summary', {}, token ? 'Reading the rollup as ' + short(token.split('.')[0]) : 'Private rollup balances are visible to their owners only'),
    h('p', { class: 'muted' }, 'The rollup hides private accounts (as a TEE rollup does). Paste your login token to read yours: it stays in this tab\'s memory, is sent only to the ephemeral node as ?token=, and is forgotten on reload. No keypair ever reaches this page.'),
    form);
}

function setToken(t) {
  token = t;
  document.getElementById('login-state').textContent = t ? 'rollup read as ' + short(t.split('.')[0]) : '';
  sockets.ephemeral.reconnect();
  route();
}

function renderOverview() {
  const wallets = cfg.wallets.map((w) => ({ ...w }));
  for (const p of pins()) if (!wallets.some((w) => w.address === p)) wallets.push({ name: 'pinned', address: p, pinned: true });
  view.replaceChildren(
    h('section', { class: 'chains' }, chainCard('base', 'Base layer', cfg.endpoints.rpc), chainCard('ephemeral', 'Ephemeral rollup', cfg.endpoints.ephemeral)),
    h('section', {}, h('h2', {}, 'Wallets'),
      table(['name', 'address', 'base SOL', 'base tokens', 'rollup SOL', 'rollup tokens'], wallets.map(walletRow), 'wallets'),
      h('p', { class: 'muted' }, 'Pin any address from its account view. Pins stay in this browser (localStorage).')),
    loginBox());
  renderChains();
}

// ---- Transaction view.

function kv(rows) {
  return h('dl', { class: 'kv' }, rows.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

async function renderTx(sig, layer) {
  view.replaceChildren(h('p', { class: 'muted' }, 'loading transaction…'));
  // Which node has it, confirmed? (A transaction just sent may be only
  // processed: its confirmation, signatureSubscribe, brings the view.)
  const me = current;
  const layers = layer ? [layer] : ['base', 'ephemeral'];
  let found = '';
  for (const l of layers) {
    try {
      const st = await rpc(l, 'getSignatureStatuses', [[sig], { searchTransactionHistory: true }]);
      if (current !== me) return; // the user moved on while it loaded
      const s0 = st.value[0];
      if (s0 && s0.confirmationStatus !== 'processed') { found = l; break; }
    } catch (e) {
      if (current !== me) return;
      view.replaceChildren(h('section', { class: 'card error' }, h('h2', {}, 'Transaction'), h('p', {}, e.message)));
      return;
    }
  }
  if (!found) {
    view.replaceChildren(h('section', { class: 'card' }, h('h2', {}, 'Transaction'), h('p', { class: 'mono wrap' }, sig),
      h('p', { class: 'muted' }, 'No node has confirmed this transaction (yet). The view appears as soon as one does.')));
    const again = debounce(() => { if (current === 'tx:' + sig) { for (const un of viewSubs) un(); viewSubs = []; renderTx(sig, layer); } }, 100);
    for (const l of layers) sub(l, 'signatureSubscribe', [sig, { commitment: 'confirmed' }], again, () => {});
    return;
  }
  let tx;
  try {
    tx = await api(cfg.api.tx, { signature: sig, layer: found });
    if (current !== me) return;
  } catch (e) {
    if (current !== me) return;
    view.replaceChildren(h('section', { class: 'card error' }, h('h2', {}, 'Transaction'), h('p', {}, e.message)));
    return;
  }
  const sections = [
    h('h1', {}, 'Transaction ', badge(tx.status, tx.status === 'success' ? 'ok' : 'failed'), ' ', badge(tx.layer, 'layer')),
    h('p', { class: 'mono wrap' }, tx.signature),
    kv([
      ['layer', tx.layer === 'base' ? 'base layer' : 'ephemeral rollup'],
      ['slot', String(tx.slot)],
      ['block time', tx.blockTime ? when(tx.blockTime * 1000) : '—'],
      ['commitment', h('span', { id: 'tx-commitment' }, tx.commitment + (tx.confirmations != null ? ' (' + tx.confirmations + ' confirmations)' : ''))],
      ['fee', sol(tx.fee)],
      tx.computeUnits != null ? ['compute units', String(tx.computeUnits)] : null,
      ['version', tx.version],
    ]),
  ];
  if (tx.error) {
    sections.push(h('section', { class: 'card error', id: 'tx-error' }, h('h2', {}, 'Why it failed'),
      h('p', { class: 'explained' }, tx.error.text),
      tx.error.hint ? h('p', { class: 'hint' }, tx.error.hint) : null,
      h('p', { class: 'muted mono' }, JSON.stringify(tx.error.raw))));
  }
  if (tx.operation) {
    const op = tx.operation;
    sections.push(h('section', { class: 'card' }, h('h2', {}, 'Operation'),
      kv([['kind', op.kind], ['owner', acctLink(op.owner)], ['mint', acctLink(op.mint)], ['amount', op.amount + ' base units'],
        op.queue && op.queue !== '11111111111111111111111111111111' ? ['queue', acctLink(op.queue)] : null,
        op.groupId ? ['group', String(op.groupId)] : null]),
      op.kind === 'privateTransfer' || op.kind === 'queuedTransfer' ? h('p', {}, 'Its payouts: ', h('a', { href: '#/rollup' }, 'rollup view')) : null));
  }
  const ex = tx.explanation;
  sections.push(h('section', { class: 'card', id: 'tx-explanation' }, h('h2', {}, 'What it does (ferry inspect)'),
    kv([['fee payer', acctLink(ex.feePayer)], ['size', ex.size + ' of ' + ex.maxSize + ' bytes'], ['signers', ex.signatures.map((s) => s.signer).map((s) => acctLink(s))]]),
    ex.instructions.map((ins) => h('div', { class: 'ix' },
      h('h3', {}, '#' + ins.index + ' ', h('span', { class: 'prog' }, ins.program), ' ', ins.name),
      ins.params && ins.params.length ? kv(ins.params.map((p) => [p.name, p.value])) : null,
      ins.error ? h('p', { class: 'warn' }, 'cannot decode: ' + ins.error) : null,
      table(['role', 'account', ''], ins.accounts.map((a) => h('tr', {}, h('td', {}, a.role), h('td', {}, a.pubkey.length <= 44 ? acctLink(a.pubkey) : a.pubkey),
        h('td', { class: 'muted' }, [a.signer ? 'signer' : '', a.writable ? 'writable' : ''].filter(Boolean).join(' '))))))),
    (ex.warnings || []).map((w) => h('p', { class: 'warn' }, 'warning: ' + w))));
  if (tx.balances.length || tx.tokenBalances.length) {
    sections.push(h('section', { class: 'card' }, h('h2', {}, 'Balance changes'),
      tx.balances.length ? table(['account', 'before', 'after', 'change'], tx.balances.map((b) => h('tr', {}, h('td', {}, acctLink(b.account)), h('td', {}, sol(b.pre)), h('td', {}, sol(b.post)), h('td', { class: b.delta.startsWith('-') ? 'neg' : 'pos' }, uiAmount(b.delta, LAMPORTS))))) : null,
      tx.tokenBalances.length ? table(['token account', 'owner', 'mint', 'before', 'after', 'change'], tx.tokenBalances.map((b) => h('tr', {}, h('td', {}, acctLink(b.account)), h('td', {}, b.owner ? acctLink(b.owner) : ''), h('td', {}, acctLink(b.mint)),
        h('td', {}, uiAmount(b.pre, b.decimals)), h('td', {}, uiAmount(b.post, b.decimals)), h('td', { class: b.delta.startsWith('-') ? 'neg' : 'pos' }, uiAmount(b.delta, b.decimals))))) : null,
      tx.layer === 'ephemeral' ? h('p', { class: 'muted' }, 'The rollup leaves private token accounts out of these lists.') : null));
  }
  sections.push(h('section', { class: 'card' }, h('h2', {}, 'Logs'),
    h('pre', { class: 'logs' }, tx.logs.join('\n') + (tx.logsOmitted ? '\n… ' + tx.logsOmitted + ' more lines' : ''))));
  view.replaceChildren(...sections);
  if (tx.commitment !== 'finalized') {
    sub(tx.layer, 'signatureSubscribe', [tx.signature, { commitment: 'finalized' }], () => {
      api(cfg.api.tx, { signature: sig, layer: tx.layer }).then((t) => {
        const el = document.getElementById('tx-commitment');
        if (el) el.textContent = t.commitment;
      }).catch(() => {});
    });
  }
}

// ---- Account view.

function decodedBlock(d) {
  if (!d) return null;
  return h('div', { class: 'decoded' }, h('h3', {}, d.kind),
    kv(d.fields.map((f) => [f.name, f.ref === 'account' ? acctLink(f.value, f.value) : f.value])),
    d.entries && d.entries.length ? table(['source', 'to', 'amount', 'due', 'group', 'task'], d.entries.map((e) => h('tr', {},
      h('td', {}, acctLink(e.source)), h('td', {}, acctLink(e.destinationOwner)), h('td', {}, e.amount), h('td', {}, when(e.readyAt)), h('td', {}, String(e.groupId)), h('td', {}, String(e.taskId))))) : null);
}

function layerState(title, s, privateNote) {
  if (privateNote) return h('div', { class: 'card' }, h('h2', {}, title), badge('private', 'private'), h('p', {}, privateNote));
  if (!s) return h('div', { class: 'card' }, h('h2', {}, title), h('p', { class: 'muted' }, 'no account here'));
  return h('div', { class: 'card' }, h('h2', {}, title),
    kv([['balance', sol(s.lamports)], ['owner', acctLink(s.owner, s.ownerName || s.owner)], ['data', s.dataLen + ' bytes'], s.executable ? ['executable', 'yes'] : null]),
    decodedBlock(s.decoded));
}

async function renderAccount(addr) {
  view.replaceChildren(h('p', { class: 'muted' }, 'loading account…'));
  const me = current;
  let a;
  try {
    a = await api(cfg.api.account, { address: addr });
    if (current !== me) return; // the user moved on while it loaded
  } catch (e) {
    if (current !== me) return;
    view.replaceChildren(h('section', { class: 'card error' }, h('h2', {}, 'Account'), h('p', {}, e.message)));
    return;
  }
  const pinned = pins().includes(a.address);
  const sections = [
    h('h1', {}, a.label || 'Account', ' ', h('button', { id: 'pin', onclick: () => {
      setPins(pinned ? pins().filter((p) => p !== a.address) : [...pins(), a.address]);
      route();
    } }, pinned ? 'Unpin' : 'Pin to overview')),
    h('p', { class: 'mono wrap' }, a.address),
  ];
  if (a.delegation) {
    const d = a.delegation;
    sections.push(h('section', { class: 'card', id: 'delegation' }, h('h2', {}, 'Delegated to a rollup'),
      kv([['rollup validator', acctLink(d.validator, d.validatorName || d.validator)],
        ['held by', d.thisRollup ? 'this ferry serve\'s rollup (' + cfg.endpoints.ephemeral + ')' : 'another rollup: not served here'],
        ['owner program', acctLink(d.ownerProgram, d.ownerName || d.ownerProgram)], ['since slot', String(d.slot)], ['record', acctLink(d.record)]])));
  }
  sections.push(h('section', { class: 'chains' },
    layerState('Base layer', a.base), layerState('Ephemeral rollup', a.ephemeral, a.ephemeralPrivate)));
  if (a.tokenAccounts.length || a.privateBalances.length) {
    sections.push(h('section', { class: 'card' }, h('h2', {}, 'Token accounts'),
      table(['layer', 'account', 'mint', 'amount'], a.tokenAccounts.map((t) => h('tr', {}, h('td', {}, t.layer), h('td', {}, acctLink(t.account)), h('td', {}, acctLink(t.mint)), h('td', {}, t.ui)))),
      a.privateBalances.length ? [h('h3', {}, 'Private balances on the rollup'),
        table(['mint', 'eATA', 'delegated', 'balance'], a.privateBalances.map((p) => h('tr', {}, h('td', {}, acctLink(p.mint)), h('td', {}, acctLink(p.ephemeralAta)),
          h('td', {}, p.delegated ? 'yes' : 'no'), h('td', {}, p.visible ? p.amount : [badge('private', 'private'), ' visible to its owner']))))] : null));
  }
  sections.push(h('section', { class: 'card' }, h('h2', {}, 'Latest transactions'),
    a.history.length ? table(['layer', 'signature', 'slot', 'time', ''], a.history.map((x) => h('tr', {}, h('td', {}, x.layer), h('td', {}, txLink(x.signature, x.layer)),
      h('td', {}, String(x.slot)), h('td', {}, x.blockTime ? when(x.blockTime * 1000) : ''), h('td', {}, x.failed ? badge('failed', 'failed') : '')))) : h('p', { class: 'muted' }, 'none')));
  view.replaceChildren(...sections);
  const refresh = debounce(() => { if (current === 'account:' + addr) renderAccount(addr); }, 400);
  sub('base', 'accountSubscribe', [addr, { commitment: 'confirmed', encoding: 'base64' }], refresh);
  sub('ephemeral', 'accountSubscribe', [addr, { commitment: 'confirmed', encoding: 'base64' }], refresh, () => {});
}

// ---- Rollup view.

const DLP = cfg.programs.delegation;
const MAGIC_CONTEXT = cfg.programs.magicContext;

function pieceRow(q, p) {
  const payout = p.payout && p.payout.signature ? txLink(p.payout.signature, 'base') : p.payout ? 'pending on base' : '';
  return h('tr', { class: 'piece', 'data-state': p.state },
    h('td', {}, String(p.index)), h('td', {}, uiAmount(p.amount, q.decimals)),
    h('td', { class: 'due', 'data-due': p.dueAt }, when(p.dueAt)), h('td', {}, badge(p.state)), h('td', {}, payout));
}

function transferBlock(q, t) {
  return h('div', { class: 'transfer', 'data-signature': t.signature, 'data-state': t.state },
    h('p', {}, badge(t.state), ' ', uiAmount(t.amount, q.decimals), ' from ', acctLink(t.source), ' to ', acctLink(t.recipient),
      ' in ', String(t.split), ' piece(s) · ', txLink(t.signature, 'ephemeral')),
    h('p', { class: 'muted' }, t.origin + ', delays ' + t.minDelayMs + '–' + t.maxDelayMs + ' ms, group ' + t.groupId),
    table(['piece', 'amount', 'due', 'state', 'payout'], t.pieces.map((p) => pieceRow(q, p))));
}

function queueBlock(q) {
  return h('div', { class: 'queue', 'data-queue': q.address },
    h('h3', {}, 'Queue ', acctLink(q.address), ' for ', q.mint === cfg.mint ? 'the demo mint' : acctLink(q.mint)),
    q.private ? h('p', { class: 'muted' }, badge('private', 'private'), ' The queue account is readable only by its validator (as on a TEE rollup). ' +
      'The transfers below come from the rollup\'s public transaction history and base\'s payouts; due times are computed as the program computes them.') : null,
    q.transfers.length === 0 ? h('p', { class: 'muted' }, 'no queued transfer in its latest transactions') : null,
    q.transfers.map((t) => transferBlock(q, t)));
}

async function renderRollup(refreshOnly) {
  if (!refreshOnly) view.replaceChildren(h('p', { class: 'muted' }, 'loading rollup…'));
  let r;
  try {
    r = await api(cfg.api.rollup);
  } catch (e) {
    if (current !== 'rollup') return;
    view.replaceChildren(h('section', { class: 'card error' }, h('h2', {}, 'Rollup'), h('p', {}, e.message)));
    return;
  }
  if (current !== 'rollup') return;
  const sections = [
    h('h1', {}, 'Rollup'),
    kv([['validator', acctLink(r.validator)], ['rollup slot', String(r.ephemeralSlot)], ['base slot', String(r.baseSlot)]]),
  ];
  sections.push(h('section', { class: 'card', id: 'queues' }, h('h2', {}, 'Private transfer queues'),
    r.queues.length === 0 ? h('p', { class: 'muted' }, 'no queue yet (ferry init-mint sets one up per mint)') : null,
    r.queues.map(queueBlock)));
  sections.push(h('section', { class: 'card', id: 'intents' }, h('h2', {}, 'Pending commits, undelegations and payouts'),
    r.intents.length === 0 ? h('p', { class: 'muted' }, 'nothing pending: the validator has executed every intent on base') :
      table(['id', 'kind', 'slot', 'what'], r.intents.map((i) => h('tr', {}, h('td', {}, String(i.id)), h('td', {}, i.kind), h('td', {}, String(i.slot)), h('td', {}, i.summary))))));
  sections.push(h('section', { class: 'card', id: 'delegated' }, h('h2', {}, 'Delegated accounts (' + r.delegatedTotal + ')'),
    r.delegatedTotal > r.delegated.length ? h('p', { class: 'muted' }, 'the newest ' + r.delegated.length + ' shown') : null,
    table(['account', 'kind', 'wallet', 'rollup', 'since slot'], r.delegated.map((d) => h('tr', {}, h('td', {}, acctLink(d.account)), h('td', {}, d.kind),
      h('td', {}, d.owner ? acctLink(d.owner) : ''), h('td', {}, d.thisRollup ? 'this rollup' : acctLink(d.validator)), h('td', {}, String(d.slot)))))));
  sections.push(h('section', { class: 'card', id: 'settlements' }, h('h2', {}, 'Settlement history (the validator on base)'),
    table(['signature', 'slot', 'time', 'steps'], r.settlements.map((s) => h('tr', {}, h('td', {}, txLink(s.signature, 'base'), s.failed ? badge('failed', 'failed') : ''),
      h('td', {}, String(s.slot)), h('td', {}, s.blockTime ? when(s.blockTime * 1000) : ''), h('td', {}, h('ul', {}, s.steps.map((x) => h('li', {}, x)))))))));
  view.replaceChildren(...sections);
  if (!refreshOnly) {
    const refresh = debounce(() => { if (current === 'rollup') renderRollup(true); }, 300);
    sub('ephemeral', 'accountSubscribe', [MAGIC_CONTEXT, { commitment: 'confirmed', encoding: 'base64' }], refresh);
    sub('base', 'logsSubscribe', [{ mentions: [r.validator] }, { commitment: 'confirmed' }], refresh);
    sub('base', 'programSubscribe', [DLP, { commitment: 'confirmed', encoding: 'base64', dataSlice: { offset: 0, length: 0 } }], refresh);
    for (const q of r.queues) sub('ephemeral', 'logsSubscribe', [{ mentions: [q.address] }, { commitment: 'confirmed' }], refresh);
  }
}

// ---- Router and search.

let current = '';

function route() {
  for (const un of viewSubs) un();
  viewSubs = [];
  const hash = decodeURIComponent(location.hash.slice(1) || '/');
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  const parts = path.split('/').filter(Boolean);
  document.querySelectorAll('nav a').forEach((a) => a.classList.remove('active'));
  if (parts[0] === 'tx' && parts[1]) {
    current = 'tx:' + parts[1];
    renderTx(parts[1], params.get('layer') || '');
  } else if (parts[0] === 'account' && parts[1]) {
    current = 'account:' + parts[1];
    renderAccount(parts[1]);
  } else if (parts[0] === 'rollup') {
    current = 'rollup';
    document.getElementById('nav-rollup').classList.add('active');
    renderRollup(false);
  } else {
    current = 'overview';
    document.getElementById('nav-overview').classList.add('active');
    renderOverview();
  }
}

document.getElementById('search').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const q = document.getElementById('search-input').value.trim();
  if (!/^[1-9A-HJ-NP-Za-km-z]+$/.test(q)) {
    setStatus('search: enter a base58 signature, address or mint', 'error');
    return;
  }
  // Signatures are 64 bytes (86–88 base58 characters), addresses and
  // mints 32 (32–44).
  location.hash = q.length > 50 ? '#/tx/' + q : '#/account/' + q;
});

window.addEventListener('hashchange', route);
setInterval(() => {
  if (current === 'overview') renderChains();
  for (const el of document.querySelectorAll('td.due[data-due]')) el.textContent = when(Number(el.dataset.due));
}, 1000);
route();
