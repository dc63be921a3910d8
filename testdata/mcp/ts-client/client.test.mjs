// Drives ferry's /mcp endpoint with the official MCP TypeScript SDK client
// and checks it against ../expectations.json, the file the Go tests
// (pkg/mcpserver) check the same endpoint against.
//
// Where the server is: FERRY_ADDR_FILE, the JSON file `ferry serve
// --addr-file` writes ({"api": "http://...", "rpc": "http://..."}), or
// FERRY_API_URL and FERRY_RPC_URL. The chain behind the API's default
// cluster must be the one at the rpc URL: the check funds a fresh wallet
// there (requestAirdrop), creates a mint with a transaction it signs itself
// and submits through the transaction.send tool, then builds a transfer with
// spl.transfer. No key ever leaves this process.
//
// Run: node --test client.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generateKeyPairSync, sign, randomBytes } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const expectations = JSON.parse(readFileSync(new URL('../expectations.json', import.meta.url), 'utf8'));

function endpoints() {
  if (process.env.FERRY_ADDR_FILE) {
    const addrs = JSON.parse(readFileSync(process.env.FERRY_ADDR_FILE, 'utf8'));
    if (!addrs.api) throw new Error(`${process.env.FERRY_ADDR_FILE} has no "api" URL: ferry serve does not serve the payments API`);
    if (!addrs.rpc) throw new Error(`${process.env.FERRY_ADDR_FILE} has no "rpc" URL`);
    return { api: addrs.api, rpc: addrs.rpc };
  }
  const api = process.env.FERRY_API_URL;
  const rpc = process.env.FERRY_RPC_URL;
  if (!api || !rpc) throw new Error('set FERRY_ADDR_FILE, or FERRY_API_URL and FERRY_RPC_URL');
  return { api, rpc };
}

// ---- base58, keys, Solana wire format (just enough for one transaction) ----

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function b58encode(bytes) {
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

function b58decode(s) {
  let n = 0n;
  for (const c of s) {
    const i = ALPHABET.indexOf(c);
    if (i < 0) throw new Error(`not base58: ${s}`);
    n = n * 58n + BigInt(i);
  }
  const bytes = [];
  while (n > 0n) {
    bytes.unshift(Number(n % 256n));
    n /= 256n;
  }
  for (const c of s) {
    if (c !== '1') break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

function keypair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { publicKey: new Uint8Array(raw), address: b58encode(raw), privateKey };
}

function shortVec(n) {
  const out = [];
  for (;;) {
    let b = n & 0x7f;
    n >>= 7;
    if (n === 0) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

function u32(v) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return [...b];
}

function u64(v) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return [...b];
}

const SYSTEM_PROGRAM = b58decode('11111111111111111111111111111111');
const TOKEN_PROGRAM = b58decode('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
const MINT_SIZE = 82;

// createMintTransaction: System CreateAccount + SPL Token InitializeMint2,
// a legacy transaction signed by the payer and the new mint.
function createMintTransaction(payer, mint, lamports, blockhash) {
  const keys = [payer.publicKey, mint.publicKey, SYSTEM_PROGRAM, TOKEN_PROGRAM];
  const createAccount = [...u32(0), ...u64(lamports), ...u64(MINT_SIZE), ...TOKEN_PROGRAM];
  const initializeMint2 = [20, 6, ...payer.publicKey, 0]; // 6 decimals, payer is the authority, no freeze authority
  const ix = (program, accounts, data) => [program, ...shortVec(accounts.length), ...accounts, ...shortVec(data.length), ...data];
  const message = Uint8Array.from([
    2, 0, 2, // signers: payer, mint; two read-only unsigned accounts (the programs)
    ...shortVec(keys.length), ...keys.flatMap((k) => [...k]),
    ...b58decode(blockhash),
    ...shortVec(2),
    ...ix(2, [0, 1], createAccount),
    ...ix(3, [1], initializeMint2),
  ]);
  const sigs = [payer, mint].map((k) => [...sign(null, message, k.privateKey)]);
  return Buffer.from(Uint8Array.from([...shortVec(2), ...sigs.flat(), ...message])).toString('base64');
}

// ---- helpers ----

let rpcId = 0;
async function rpc(url, method, params) {
  const resp = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  const body = await resp.json();
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

function substitute(v, vars) {
  if (typeof v === 'string') return v in vars ? vars[v] : v;
  if (Array.isArray(v)) return v.map((x) => substitute(x, vars));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, vars)]));
  return v;
}

function text(result, i = 0) {
  assert.equal(result.content[i].type, 'text');
  return result.content[i].text;
}

function ok(result) {
  assert.notEqual(result.isError, true, `tool failed: ${result.content.map((c) => c.text).join(' | ')}`);
  assert.ok(result.structuredContent, 'no structuredContent');
  return result.structuredContent;
}

// ---- the check ----

const ep = endpoints();
const client = new Client({ name: 'ferry-ts-sdk-check', version: '1.0.0' });
let tools;

before(async () => {
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', ep.api)));
  tools = (await client.listTools()).tools; // also caches the output schemas: callTool validates against them
});

after(async () => {
  await client.close();
});

test('initialize: server info and capabilities', () => {
  const info = client.getServerVersion();
  for (const [k, v] of Object.entries(expectations.serverInfo)) {
    assert.equal(info[k], v, `serverInfo.${k}`);
  }
  assert.deepEqual(client.getServerCapabilities(), expectations.capabilities);
});

test('tools/list: names, titles, required inputs, output schemas', () => {
  // ferry serve in local mode adds its development tools (no --no-cheatcodes).
  const wanted = [...expectations.tools, ...expectations.devTools];
  const byName = new Map(tools.map((t) => [t.name, t]));
  assert.deepEqual([...byName.keys()].sort(), wanted.map((t) => t.name).sort());
  for (const want of wanted) {
    const tool = byName.get(want.name);
    assert.equal(tool.title, want.title, `${want.name} title`);
    assert.equal(tool.inputSchema.type, 'object', `${want.name} input schema`);
    assert.deepEqual([...(tool.inputSchema.required ?? [])].sort(), [...want.required].sort(), `${want.name} required inputs`);
    assert.equal(tool.outputSchema?.type, 'object', `${want.name} output schema`);
    assert.ok(tool.description, `${want.name} description`);
  }
});

test('spl.transfer: a mint created through transaction.send, then a transfer build', async () => {
  const payer = keypair();
  const mint = keypair();

  // Fund the payer and wait for the airdrop through chain.getSignatureStatuses.
  const airdrop = await rpc(ep.rpc, 'requestAirdrop', [payer.address, 1_000_000_000]);
  let status;
  for (let i = 0; i < 400; i++) {
    const out = ok(await client.callTool({ name: 'chain.getSignatureStatuses', arguments: { signatures: [airdrop] } }));
    status = out.statuses[0];
    if (status.found && status.confirmationStatus !== 'processed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(status.found && status.confirmationStatus !== 'processed', `airdrop not confirmed: ${JSON.stringify(status)}`);
  assert.equal(status.err, undefined);

  // Create the mint: signed here, sent and confirmed by the server.
  const rent = await rpc(ep.rpc, 'getMinimumBalanceForRentExemption', [MINT_SIZE]);
  const { value: bh } = await rpc(ep.rpc, 'getLatestBlockhash', [{ commitment: 'confirmed' }]);
  const sent = await client.callTool({
    name: 'transaction.send',
    arguments: {
      transactionBase64: createMintTransaction(payer, mint, rent, bh.blockhash),
      sendTo: 'base',
      confirm: true,
      recentBlockhash: bh.blockhash,
      lastValidBlockHeight: bh.lastValidBlockHeight,
    },
  });
  const receipt = ok(sent);
  assert.equal(receipt.confirmed, true);
  assert.equal(text(sent), `Sent and confirmed the transaction on base: ${receipt.signature}.`);

  // The transfer build, against the shared expectations.
  const vars = { $PAYER: payer.address, $MINT: mint.address };
  const x = expectations.transfer;
  const result = await client.callTool({ name: x.tool, arguments: substitute(x.arguments, vars) });
  const out = ok(result);
  assert.equal(result.content.length, 1);
  assert.equal(text(result), x.text);
  assert.deepEqual(Object.keys(out).sort(), [...x.structuredContentKeys].sort());
  for (const [k, v] of Object.entries(substitute(x.structuredContent, vars))) {
    assert.deepEqual(out[k], v, `structuredContent.${k}`);
  }
  assert.equal(typeof out.transactionBase64, 'string');
  assert.equal(typeof out.lastValidBlockHeight, 'number');

  // The unsigned build explains itself.
  const desc = ok(await client.callTool({ name: 'transaction.inspect', arguments: { transaction: out.transactionBase64 } }));
  assert.equal(desc.feePayer, payer.address);
  assert.equal(desc.recentBlockhash, out.recentBlockhash);
  assert.deepEqual(desc.signatures.map((s) => [s.signer, s.signed]), [[payer.address, false]]);
});

test('spl.transfer with invalid arguments: the REST error as an isError result', async () => {
  const x = expectations.transferInvalid;
  const result = await client.callTool({ name: x.tool, arguments: x.arguments });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent, undefined);
  assert.equal(result.content.length, 2);
  assert.equal(text(result, 0), x.text);
  assert.deepEqual(JSON.parse(text(result, 1)), { error: x.error });
  assert.equal(result._meta?.['ferry.sh/httpStatus'], x.httpStatus);
});

test('an unknown tool is a JSON-RPC error', async () => {
  await assert.rejects(client.callTool({ name: 'spl.nope', arguments: { id: randomBytes(4).toString('hex') } }), /unknown tool/);
});
