// ferry side: a real `ferry serve --in-memory` whose base node is driven
// through its JSON-RPC only. Its slot clock is stopped in practice (a
// 24-hour slot); the test ends slots itself with ferry_advanceSlot, so
// blocks change only when the generator asks, on both sides at once.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { b58 } from './wire.mjs';

// Agave's RPC refuses a transaction whose address tables cannot be used
// (-32602, "invalid transaction: <the error's text>").
const INVALID_TX = {
  "invalid transaction: Transaction loads an address table account that doesn't exist": 'AddressLookupTableNotFound',
  'invalid transaction: Transaction loads an address table account with an invalid owner': 'InvalidAddressLookupTableOwner',
  'invalid transaction: Transaction loads an address table account with invalid data': 'InvalidAddressLookupTableData',
  'invalid transaction: Transaction address table lookup uses an invalid index': 'InvalidAddressLookupTableIndex',
  'invalid transaction: Account loaded twice': 'AccountLoadedTwice',
};

export class Ferry {
  static async start(bin) {
    if (!bin) throw new Error('set FERRY_BIN to the ferry binary');
    const dir = mkdtempSync(join(tmpdir(), 'ferry-differential-'));
    const addrFile = join(dir, 'addr.json');
    const args = ['serve', '--in-memory', '--no-demo', '--slot-time', '24h', '--addr-file', addrFile,
      '--api-addr', '127.0.0.1:0', '--rpc-addr', '127.0.0.1:0', '--ephemeral-addr', '127.0.0.1:0',
      '--router-addr', '127.0.0.1:0', '--log-format', 'json', '--log-level', 'warn'];
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
    const f = new Ferry();
    f.url = JSON.parse(readFileSync(addrFile, 'utf8')).rpc;
    f.stop = async () => {
      if (!exited) {
        child.kill('SIGTERM');
        for (let i = 0; i < 100 && !exited; i++) await sleep(100);
        if (!exited) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    };
    f.log = () => log;
    return f;
  }

  async call(method, params = []) {
    const res = await fetch(this.url, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = await res.json();
    if (body.error) {
      const e = new Error(`${method}: ${body.error.code} ${body.error.message}`);
      e.rpc = body.error;
      throw e;
    }
    return body.result;
  }

  async airdrop(key, lamports) {
    await this.call('requestAirdrop', [key, lamports, { commitment: 'processed' }]);
  }

  async latestBlockhash() {
    return (await this.call('getLatestBlockhash', [{ commitment: 'processed' }])).value.blockhash;
  }

  /** advanceSlot ends the working slot, or the next n slots. */
  async advanceSlot(n = 1) {
    return this.call('ferry_advanceSlot', n === 1 ? [] : [{ slots: n }]);
  }

  /** accounts reads keys at processed commitment: {lamports, owner, data, executable} or null. */
  async accounts(keys) {
    const out = [];
    for (let i = 0; i < keys.length; i += 100) {
      const r = await this.call('getMultipleAccounts', [keys.slice(i, i + 100), { encoding: 'base64', commitment: 'processed' }]);
      for (const a of r.value) {
        out.push(a && a.lamports > 0 ? {
          lamports: BigInt(a.lamports), owner: a.owner, data: Buffer.from(a.data[0], 'base64'), executable: a.executable,
        } : null);
      }
    }
    return out;
  }

  /**
   * send submits a signed transaction without preflight, as a client that
   * wants failures to land does. Returns {landed, err}: a transaction that
   * did not land has no status, and a signature-verified simulation then
   * tells why.
   */
  async send(raw, signature) {
    const b64 = Buffer.from(raw).toString('base64');
    // A signature sent before has the old status: the same bytes again
    // cannot land, and simulation says why (or it is a replay).
    this.sent ??= new Set();
    const again = this.sent.has(signature);
    this.sent.add(signature);
    try {
      await this.call('sendTransaction', [b64, { encoding: 'base64', skipPreflight: true, preflightCommitment: 'processed' }]);
    } catch (e) {
      if (e.rpc?.code === -32602) return { landed: false, err: INVALID_TX[e.rpc.message] ?? 'SanitizeFailure', detail: e.rpc.message };
      throw e;
    }
    const st = await this.call('getSignatureStatuses', [[signature]]);
    const s = st.value[0];
    if (s && !again) return { landed: true, err: s.err };
    try {
      const sim = await this.call('simulateTransaction', [b64, { encoding: 'base64', sigVerify: true, commitment: 'processed' }]);
      return { landed: false, err: sim.value.err ?? (again ? 'AlreadyProcessed' : 'DroppedWithoutError') };
    } catch (e) {
      if (e.rpc?.code === -32003) return { landed: false, err: 'SignatureFailure' };
      throw e;
    }
  }

  /** returnData reads a landed transaction's return data once its block is confirmed. */
  async returnData(signature) {
    const tx = await this.call('getTransaction', [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }]);
    if (!tx) throw new Error(`getTransaction ${signature}: not found`);
    const rd = tx.meta.returnData;
    return rd && rd.data[0] ? { programId: rd.programId, data: rd.data[0] } : null;
  }

  async sysvar(key) {
    const r = await this.call('getAccountInfo', [key, { encoding: 'base64', commitment: 'processed' }]);
    return r.value ? Buffer.from(r.value.data[0], 'base64') : null;
  }
}

export { b58 };
