// What a browser dApp does before and while it talks to ferry serve: a
// CORS preflight (OPTIONS with Origin and Access-Control-Request-*), then
// the request itself with an Origin header. Chain nodes and the router
// allow any origin, as Agave does; the payments API uses its configured
// origin (default "*"). State-changing local-only methods (the faucet)
// refuse browser requests from origins the operator did not allow.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { startFerry } from './harness.mjs';

const ORIGIN = 'https://dapp.example';
let ferry;

before(async () => {
  ferry = await startFerry();
});

after(async () => {
  await ferry?.stop();
});

async function preflight(url, headers = 'content-type,solana-client') {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': headers },
  });
}

function allowsOrigin(res) {
  const v = res.headers.get('access-control-allow-origin');
  return v === '*' || v === ORIGIN;
}

for (const which of ['rpc', 'ephemeral', 'router']) {
  test(`${which}: preflight and a cross-origin JSON-RPC call`, async () => {
    const url = ferry[which];
    const pre = await preflight(url);
    assert.ok(pre.status === 200 || pre.status === 204, `preflight status ${pre.status}`);
    assert.ok(allowsOrigin(pre), 'preflight allows the origin');
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
    const allowHeaders = (pre.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    assert.ok(allowHeaders === '*' || (allowHeaders.includes('content-type') && allowHeaders.includes('solana-client')),
      `allow-headers ${allowHeaders}`);

    const method = which === 'router' ? 'getRoutes' : 'getSlot';
    const res = await fetch(url, {
      method: 'POST',
      headers: { Origin: ORIGIN, 'Content-Type': 'application/json', 'solana-client': 'js/1.0.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
    });
    assert.equal(res.status, 200);
    assert.ok(allowsOrigin(res), 'response allows the origin');
    const body = await res.json();
    assert.equal(body.error, undefined, JSON.stringify(body.error));
  });
}

test('payments API: preflight and a cross-origin GET', async () => {
  const pre = await fetch(`${ferry.api}/v1/spl/transfer`, {
    method: 'OPTIONS',
    headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,authorization' },
  });
  assert.ok(pre.status === 200 || pre.status === 204, `preflight status ${pre.status}`);
  assert.ok(allowsOrigin(pre));
  const res = await fetch(`${ferry.api}/health`, { headers: { Origin: ORIGIN } });
  assert.equal(res.status, 200);
  assert.ok(allowsOrigin(res));
});

test('faucet: refused for a browser origin the operator did not allow, open to local tools', async () => {
  const to = ferry.demo.wallets[0].address;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'requestAirdrop', params: [to, 1_000_000] });
  // A page's "simple" request: text/plain needs no preflight.
  const fromPage = await fetch(ferry.rpc, { method: 'POST', headers: { Origin: 'https://evil.example', 'Content-Type': 'text/plain' }, body });
  const refused = await fromPage.json();
  assert.ok(refused.error, `a browser-origin airdrop was accepted: ${JSON.stringify(refused)}`);
  assert.equal(refused.result, undefined);
  const fromTool = await fetch(ferry.rpc, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  const ok = await fromTool.json();
  assert.equal(ok.error, undefined, JSON.stringify(ok.error));
  assert.equal(typeof ok.result, 'string');
});
