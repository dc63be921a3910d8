// The differential test: for each seed, a fresh `ferry serve` (base node)
// and a fresh LiteSVM get the same funded payers and then the same signed
// transactions from the generator. After each one, whether it landed, its
// error, its fee and every byte of every account it names (lamports, owner,
// data, executable) must be the same on both sides.
//
//   FERRY_BIN=/path/to/ferry node run.mjs [--seeds 1,2,3] [--count N] [--verbose]
//
// A divergence prints a reproduction (seed, transaction index, the decoded
// instructions, both outcomes, the differing accounts); the run goes on
// with ferry's state copied into LiteSVM so one difference does not
// cascade. Divergences documented in docs/localnet.md ("Differences from
// the real programs") are matched by knownDivergence and counted
// separately; any other one fails the run (exit 1).

import { parseArgs } from 'node:util';

import { Ferry } from './ferry.mjs';
import { Generator } from './gen.mjs';
import { CLOCK, INCINERATOR, SLOT_HASHES, NATIVE_MINT, NATIVE_MINT_2022, describe } from './programs.mjs';
import { Rng } from './rng.mjs';
import { Svm } from './svm.mjs';
import { b58, compile, sha256, signTx, unb58 } from './wire.mjs';

const { values: opts } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    count: { type: 'string', default: '400' },
    verbose: { type: 'boolean', default: false },
    stats: { type: 'boolean', default: false },
    'max-reports': { type: 'string', default: '20' },
  },
});

const SYSVAR_OWNER = 'Sysvar1111111111111111111111111111111111111';
const PACKET_DATA_SIZE = 1232;
const RETURNS_DATA = new Set(['token.getAccountDataSize', 'token.amountToUiAmount', 'token.uiAmountToAmount']);

/**
 * knownDivergence names a documented, deliberate difference that explains
 * a divergence, or returns null. Each entry is listed with its reason in
 * docs/localnet.md.
 */
function knownDivergence(tx, ours, theirs, diffs, ctx) {
  // Durable nonces inside a durable-nonce transaction. Agave advances a
  // nonce to DurableNonce(the bank's blockhash), and advances the
  // transaction's nonce even when the transaction fails, so it cannot be
  // replayed. LiteSVM derives the value from the transaction's own
  // blockhash (the old nonce) and leaves the nonce of a failed transaction
  // as it was. ferry follows Agave. Accepted only when every differing
  // account is a nonce account differing only in its stored nonce, ferry
  // holds Agave's value and LiteSVM one of its two.
  if (tx.nonce && theirs.landed && ours.landed && same(ours.err, theirs.err) && diffs.length) {
    const agave = durableNonce(ctx.blockhash);
    const liteOk = (key, v) => v === durableNonce(tx.blockhash) || (theirs.err && key === tx.nonce && v === nonceOf(ctx.pre.get(key)));
    const ok = diffs.every((d) => {
      const f = ctx.ferry.get(d.key);
      const s = ctx.svm.get(d.key);
      if (Object.keys(d).join() !== 'key,data' || !f || !s || f.data.length < 72) return false;
      const a = Buffer.from(f.data);
      const b = Buffer.from(s.data);
      b.set(a.subarray(40, 72), 40);
      return a.equals(b) && nonceOf(f) === agave && liteOk(d.key, nonceOf(s));
    });
    if (ok) return 'durable-nonce-value';
  }
  // The same difference seen from a second AdvanceNonceAccount in one
  // block: a nonce already advanced in this block holds
  // DurableNonce(the bank's blockhash), so Agave (and ferry) refuse to
  // advance it again with NonceBlockhashNotExpired (System error 7);
  // LiteSVM compares against the transaction's blockhash instead and lets
  // it advance. Accepted only when ferry failed with exactly that error on
  // an AdvanceNonceAccount whose account held Agave's next value before the
  // transaction, so Agave would have refused it too.
  const ie = ours.landed && theirs.landed && ours.err?.InstructionError;
  if (ie && same(ie[1], { Custom: 7 }) && !same(ours.err, theirs.err)) {
    const ix = tx.ixs[ie[0]];
    const acct = ix?.name === 'system.advanceNonceAccount' ? ix.keys[0].pubkey : null;
    if (acct && nonceOf(ctx.pre.get(acct)) === durableNonce(ctx.blockhash)) return 'durable-nonce-same-block';
  }
  return null;
}

function nonceOf(a) {
  return a && a.data.length >= 72 ? b58(a.data.subarray(40, 72)) : null;
}

function durableNonce(blockhash) {
  return b58(sha256(Buffer.from('DURABLE_NONCE'), unb58(blockhash)));
}

/**
 * skipped: program accounts (native Go code here, ELF there) and sysvars
 * (updated by each chain itself) are not compared or copied.
 */
function skipped(f, s) {
  return (f && (f.executable || f.owner === SYSVAR_OWNER)) || (s && (s.executable || s.owner === SYSVAR_OWNER));
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

function accountDiff(key, f, s) {
  if (!f && !s) return null;
  if (!f || !s) return { key, ferry: f ? summary(f) : null, litesvm: s ? summary(s) : null };
  const d = {};
  if (f.lamports !== s.lamports) d.lamports = [String(f.lamports), String(s.lamports)];
  if (f.owner !== s.owner) d.owner = [f.owner, s.owner];
  if (f.executable !== s.executable) d.executable = [f.executable, s.executable];
  if (!f.data.equals(s.data)) {
    const bytes = [];
    for (let i = 0; i < Math.max(f.data.length, s.data.length) && bytes.length < 12; i++) {
      if (f.data[i] !== s.data[i]) bytes.push(`${i}:${f.data[i]?.toString(16) ?? '-'}/${s.data[i]?.toString(16) ?? '-'}`);
    }
    d.data = { len: [f.data.length, s.data.length], bytes: bytes.join(' ') };
  }
  return Object.keys(d).length ? { key, ...d } : null;
}

function summary(a) {
  return { lamports: String(a.lamports), owner: a.owner, len: a.data.length, executable: a.executable };
}

async function syncChain(ferry, svm, blockhash) {
  // A block ended: as Agave (and ferry), burn what the incinerator holds.
  svm.set(INCINERATOR, null);
  svm.setBlockhash(blockhash);
  svm.setClock(await ferry.sysvar(CLOCK));
  const sh = await ferry.sysvar(SLOT_HASHES);
  if (sh) svm.setSlotHashes(sh);
}

async function runSeed(seed, count, stats) {
  const ferry = await Ferry.start(process.env.FERRY_BIN);
  try {
    const svm = new Svm();
    await syncChain(ferry, svm, await ferry.latestBlockhash());
    // The wrapped-SOL mints are genesis accounts on both; start from ferry's.
    const natives = await ferry.accounts([NATIVE_MINT, NATIVE_MINT_2022]);
    svm.set(NATIVE_MINT, natives[0]);
    svm.set(NATIVE_MINT_2022, natives[1]);

    const rng = new Rng(seed);
    const gen = new Generator(rng, svm, seed);
    await gen.setup();
    for (const k of gen.payers) {
      await ferry.airdrop(k, 1000e9);
      svm.airdrop(k, 1000e9);
    }
    for (const k of gen.wallets) {
      await ferry.airdrop(k, 2e9);
      svm.airdrop(k, 2e9);
    }

    let blockhash = await ferry.latestBlockhash();
    for (let i = 0; i < count; i++) {
      if (rng.chance(0.03) || gen.wantJump) {
        // Now and then a long jump, so lookup tables outlast their
        // deactivation cool-down (512 slots).
        const r = await ferry.advanceSlot(gen.wantJump ? 520 : 1);
        gen.wantJump = false;
        blockhash = r.blockhash;
        await syncChain(ferry, svm, blockhash);
      }
      // Transactions that do not fit a packet never reach a cluster's
      // runtime (the RPC refuses them); draw another.
      let tx, msg, raw, signature;
      for (;;) {
        tx = gen.next();
        try {
          msg = compile({ payer: tx.payer, instructions: tx.ixs, blockhash: tx.blockhash ?? blockhash, version: tx.version, tables: tx.tables });
        } catch (e) {
          throw new Error(`seed ${seed} tx ${i}: compile: ${e.message}`);
        }
        ({ raw, signature } = signTx(msg, gen.keys));
        if (raw.length <= PACKET_DATA_SIZE) break;
      }
      const pre = new Map(msg.keys.map((k) => [k, svm.get(k)]));
      const theirs = svm.send(raw, signature, tx.version === 'v0');
      const ours = await ferry.send(raw, signature);
      const keys = [...new Set(msg.keys)];
      const fa = await ferry.accounts(keys);
      const diffs = [];
      keys.forEach((k, j) => {
        const s = svm.get(k);
        const f = fa[j];
        if (skipped(f, s)) return;
        const d = accountDiff(k, f, s);
        if (d) diffs.push(d);
      });
      // Instructions that answer through return data: their answer is
      // compared too (ferry serves it once the block is confirmed).
      const execBlockhash = blockhash;
      if (ours.landed && theirs.landed && tx.ixs.some((x) => RETURNS_DATA.has(x.name))) {
        const r = await ferry.advanceSlot();
        blockhash = r.blockhash;
        await syncChain(ferry, svm, blockhash);
        ours.returnData = await ferry.returnData(signature);
      } else {
        ours.returnData = theirs.returnData = undefined;
      }
      const outcomeDiff = ours.landed !== theirs.landed || !same(ours.err, theirs.err) || !same(ours.returnData, theirs.returnData);
      stats.total++;
      if (theirs.err) stats.failed++;
      if (!theirs.landed) stats.rejected++;
      for (const l of tx.labels) {
        const o = (stats.ops[l] ??= { n: 0, ok: 0 });
        o.n++;
        if (theirs.landed && !theirs.err) o.ok++;
      }
      if (outcomeDiff || diffs.length) {
        const known = knownDivergence(tx, ours, theirs, diffs,
          { blockhash: execBlockhash, pre, ferry: new Map(keys.map((k, j) => [k, fa[j]])), svm: { get: (k) => svm.get(k) } });
        if (known) stats.known[known] = (stats.known[known] ?? 0) + 1;
        else {
          stats.divergences++;
          if (stats.divergences <= Number(opts['max-reports'])) {
            console.log(`\nDIVERGENCE seed=${seed} tx=${i} (${tx.labels.join(', ')}) ${tx.version}${tx.blockhash ? ' nonce' : ''}`);
            console.log(`  reproduce: node run.mjs --seeds ${seed} --count ${i + 1} --verbose`);
            tx.ixs.forEach((ix, j) => console.log(`  ix ${j}: ${describe(ix)}`));
            console.log(`  accounts before: ${[...pre].map(([k, a]) => `${k.slice(0, 6)}=${a ? `${a.owner.slice(0, 6)}/${a.data.length}/${a.lamports}` : 'none'}`).join(' ')}`);
            if (opts.verbose) {
              const fc = await ferry.sysvar(CLOCK);
              console.log(`  blockhash: ferry ${await ferry.latestBlockhash()} litesvm ${svm.inner.latestBlockhash()}`);
              console.log(`  clock: ferry slot ${fc.readBigUInt64LE(0)} time ${fc.readBigInt64LE(32)}, litesvm slot ${svm.slot()} time ${svm.unixTimestamp()}`);
            }
            console.log(`  ferry:   landed=${ours.landed} err=${JSON.stringify(ours.err)}${ours.detail ? ` (${ours.detail})` : ''}`);
            console.log(`  litesvm: landed=${theirs.landed} err=${JSON.stringify(theirs.err)}`);
            if (!same(ours.returnData, theirs.returnData)) {
              console.log(`  return data: ferry ${JSON.stringify(ours.returnData)} litesvm ${JSON.stringify(theirs.returnData)}`);
            }
            for (const d of diffs) console.log(`  account ${JSON.stringify(d)}`);
            if (opts.verbose) console.log(`  litesvm logs:\n    ${theirs.logs.join('\n    ')}`);
          }
        }
        // Carry on from ferry's state.
        keys.forEach((k, j) => { if (!skipped(fa[j], svm.get(k))) svm.set(k, fa[j]); });
      } else if (opts.verbose) {
        console.log(`ok seed=${seed} tx=${i} (${tx.labels.join(', ')}) err=${JSON.stringify(theirs.err)}`);
      }
      tx.after(theirs.err === null && theirs.landed);
    }
  } finally {
    await ferry.stop();
  }
}

const stats = { total: 0, failed: 0, rejected: 0, divergences: 0, known: {}, ops: {} };
const started = Date.now();
for (const seed of opts.seeds.split(',').filter(Boolean)) {
  await runSeed(seed, Number(opts.count), stats);
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
console.log(`\n${stats.total} transactions over seeds ${opts.seeds} in ${secs}s: ${stats.failed} failed, ${stats.rejected} rejected, ` +
  `${stats.divergences} undocumented divergences, known: ${JSON.stringify(stats.known)}`);
if (opts.verbose || opts.stats) {
  console.log('operations (transactions containing it / of which succeeded):');
  for (const [k, o] of Object.entries(stats.ops).sort()) console.log(`  ${k.padEnd(20)} ${String(o.n).padStart(6)} ${String(o.ok).padStart(6)}`);
}
process.exit(stats.divergences ? 1 : 0);
