// Starts a real `ferry serve` for one test file and tells the tests where
// it is. The chain nodes' RPC ports are chosen so that port + 1 is free
// too: the tests then construct clients the stock way (web3.js derives
// ws://host:<rpc port + 1> itself), with no client-side workaround.
//
// FERRY_BIN names the ferry binary (.ci/run builds it).

import { spawn } from 'node:child_process';
import { createPrivateKey, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

function listenOn(port) {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(null));
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}

// freePortPair returns a port P such that P and P+1 were both free.
async function freePortPair() {
  for (let i = 0; i < 50; i++) {
    const a = await listenOn(0);
    const p = a.address().port;
    const b = await listenOn(p + 1);
    await new Promise((r) => a.close(r));
    if (b) {
      await new Promise((r) => b.close(r));
      return p;
    }
  }
  throw new Error('no pair of adjacent free ports found');
}

async function freePort() {
  const a = await listenOn(0);
  const p = a.address().port;
  await new Promise((r) => a.close(r));
  return p;
}

/**
 * startFerry runs `ferry serve` on fresh ports and a fresh data directory.
 * The ephemeral node's RPC port E has the router on E + 1, as in ferry's
 * defaults (7799 and 7800), so web3.js's derived websocket URL for the
 * rollup lands on the router's listener.
 */
export async function startFerry(extraArgs = []) {
  const bin = process.env.FERRY_BIN;
  if (!bin) throw new Error('set FERRY_BIN to the ferry binary (.ci/run builds it)');
  const dir = mkdtempSync(join(tmpdir(), 'ferry-clients-'));
  const data = join(dir, 'data');
  const addrFile = join(dir, 'addr.json');
  const rpcPort = await freePortPair();
  let erPort = await freePortPair();
  while (Math.abs(erPort - rpcPort) < 2) erPort = await freePortPair();
  const apiPort = await freePort();
  const args = [
    'serve', '--data', data, '--addr-file', addrFile,
    '--api-addr', `127.0.0.1:${apiPort}`,
    '--rpc-addr', `127.0.0.1:${rpcPort}`,
    '--ephemeral-addr', `127.0.0.1:${erPort}`,
    '--router-addr', `127.0.0.1:${erPort + 1}`,
    '--log-format', 'json',
    ...extraArgs,
  ];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  let exited = null;
  child.on('exit', (code, sig) => { exited = { code, sig }; });
  for (let i = 0; i < 600 && !existsSync(addrFile); i++) {
    if (exited) throw new Error(`ferry serve exited (${JSON.stringify(exited)}):\n${log}`);
    await sleep(100);
  }
  if (!existsSync(addrFile)) throw new Error(`ferry serve wrote no address file:\n${log}`);
  const urls = JSON.parse(readFileSync(addrFile, 'utf8'));
  const demo = JSON.parse(readFileSync(join(data, 'demo.json'), 'utf8'));
  return {
    urls,
    demo,
    dataDir: data,
    rpc: `http://127.0.0.1:${rpcPort}`,
    ephemeral: `http://127.0.0.1:${erPort}`,
    router: `http://127.0.0.1:${erPort + 1}`,
    api: `http://127.0.0.1:${apiPort}`,
    log: () => log,
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        for (let i = 0; i < 100 && !exited; i++) await sleep(100);
        if (!exited) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** readKeypair reads a Solana CLI keypair file into its 64 secret bytes. */
export function readKeypair(path) {
  return Uint8Array.from(JSON.parse(readFileSync(path, 'utf8')));
}

/** withTimeout rejects when p has not settled after ms milliseconds. */
export function withTimeout(p, ms, what) {
  let t;
  const timeout = new Promise((_, reject) => {
    t = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(t));
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** base58 encodes bytes (Bitcoin alphabet, as Solana uses). */
export function base58(bytes) {
  let n = 0n;
  for (const b of bytes) n = n * 256n + BigInt(b);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/**
 * login runs the payments API's challenge -> sign -> login exchange for a
 * 64-byte Solana secret key and returns the bearer token, which the local
 * rollup accepts as ?token= (it shows private accounts only to their owner,
 * as a TEE rollup does).
 */
export async function login(api, secretKey) {
  const pubkey = base58(secretKey.slice(32));
  const ch = await (await fetch(`${api}/v1/spl/challenge?pubkey=${pubkey}`)).json();
  if (!ch.challenge) throw new Error(`challenge: ${JSON.stringify(ch)}`);
  // PKCS#8 wrapping of a raw ed25519 seed, for node:crypto.
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(secretKey.slice(0, 32))]);
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const signature = base58(sign(null, Buffer.from(ch.challenge, 'utf8'), key));
  const res = await fetch(`${api}/v1/spl/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ pubkey, challenge: ch.challenge, signature }),
  });
  const out = await res.json();
  if (!out.token) throw new Error(`login: ${res.status} ${JSON.stringify(out)}`);
  return out.token;
}

/**
 * untilSubscribed waits until every subscription of a web3.js 1.x
 * Connection is active on the server (or already done), so that a
 * transaction sent next cannot land before a subscription meant to see it. web3.js has no
 * public signal for it; its per-subscription state is the one it keeps.
 */
export async function untilSubscribed(conn, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const subs = Object.values(conn._subscriptionsByHash ?? {});
    // Past subscribing: a subscription that already got what it waited
    // for may be unsubscribing by now.
    if (subs.length > 0 && subs.every((s) => s.state !== 'pending' && s.state !== 'subscribing')) return;
    if (Date.now() > deadline) throw new Error(`subscriptions not active after ${ms} ms: ${subs.map((s) => s.state).join(', ')}`);
    await sleep(20);
  }
}

/**
 * closeWebsocket lets a web3.js 1.x Connection close its websocket before
 * the server goes away. web3.js has no public close: it closes the socket
 * itself 500 ms after its last subscription ends, and its websocket client
 * reconnects forever when the server closes the socket first, which would
 * keep the test process alive.
 */
export async function closeWebsocket(conn) {
  if (!conn) return;
  await sleep(800);
  const ws = conn._rpcWebSocket;
  if (ws?.socket && ws.socket.readyState === 1) ws.close();
}
