// The whole payments story through stock web3.js, as an application using
// ferry serve as its backend would run it: the payments API builds each
// transaction, web3.js signs it and sends it to the node the build names
// (sendTo), confirms it through the websocket, and watches the accounts
// that settle asynchronously with accountSubscribe.
//
// deposit (base -> rollup) -> private transfer from the rollup to a wallet
// on base, in 2 pieces -> withdrawal back to base.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Connection, Keypair, PublicKey, VersionedTransaction } from '@solana/web3.js';
import { AccountLayout, getAssociatedTokenAddressSync } from '@solana/spl-token';

import { closeWebsocket, login, readKeypair, startFerry, withTimeout } from './harness.mjs';

let ferry;
let base;
let er;

before(async () => {
  ferry = await startFerry();
  base = new Connection(ferry.rpc, 'confirmed');
});

after(async () => {
  await Promise.all([closeWebsocket(base), closeWebsocket(er)]);
  await ferry?.stop();
});

async function build(route, body) {
  const res = await fetch(`${ferry.api}/v1/spl/${route}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  const out = await res.json();
  assert.equal(res.status, 200, `${route}: ${JSON.stringify(out)}`);
  return out;
}

// signAndSend signs a build with web3.js and sends it where the build says,
// confirming through the websocket.
async function signAndSend(built, signer) {
  const tx = VersionedTransaction.deserialize(Buffer.from(built.transactionBase64, 'base64'));
  tx.sign([signer]);
  const conn = built.sendTo === 'ephemeral' ? er : base;
  const signature = await conn.sendRawTransaction(tx.serialize());
  const res = await withTimeout(conn.confirmTransaction({
    signature, blockhash: built.recentBlockhash, lastValidBlockHeight: built.lastValidBlockHeight,
  }, 'confirmed'), 30000, `${built.kind} confirmation`);
  assert.equal(res.value.err, null, `${built.kind} failed: ${JSON.stringify(res.value.err)}`);
  return signature;
}

// untilAmount resolves once the token account at address on conn holds
// want: checked now, on every accountNotification, and every second. The
// polling closes a race a real client has too: a change that lands
// after the first read but before the subscription is active sends no
// notification. (The websocket is still exercised: signAndSend confirms
// through it.) The listener is removed however the wait ends, so a
// failure does not leave web3.js reconnecting forever.
function untilAmount(conn, address, want, what) {
  let id;
  let timer;
  const reached = new Promise((resolve, reject) => {
    const check = (data) => {
      if (data && AccountLayout.decode(data).amount === want) resolve(want);
    };
    id = conn.onAccountChange(address, (info) => check(info.data), { commitment: 'confirmed' });
    const read = () => conn.getAccountInfo(address).then((info) => check(info?.data), reject);
    read();
    timer = setInterval(read, 1000);
  });
  return withTimeout(reached, 60000, what).finally(() => {
    clearInterval(timer);
    conn.removeAccountChangeListener(id).catch(() => {});
  });
}

async function amountOf(conn, address) {
  const info = await conn.getAccountInfo(address);
  return info ? AccountLayout.decode(info.data).amount : 0n;
}

test('deposit, private split payout from the rollup, withdrawal: all through web3.js', async () => {
  const mint = new PublicKey(ferry.demo.mint);
  const [aliceW, bobW] = ferry.demo.wallets;
  const alice = Keypair.fromSecretKey(readKeypair(aliceW.keypair));
  const bob = new PublicKey(bobW.address);
  const aliceAta = getAssociatedTokenAddressSync(mint, alice.publicKey);
  const bobAta = getAssociatedTokenAddressSync(mint, bob);

  // The rollup shows alice's balance only to her (as a TEE rollup does):
  // her reads carry the login token the payments API issues. web3.js keeps
  // the query when it derives the websocket URL, so her subscriptions do too.
  const token = await login(ferry.api, alice.secretKey);
  er = new Connection(`${ferry.ephemeral}/?token=${encodeURIComponent(token)}`, 'confirmed');

  const aliceBase0 = await amountOf(base, aliceAta);
  const bobBase0 = await amountOf(base, bobAta);
  assert.ok(aliceBase0 > 0n, 'the demo funded alice');

  // 1. deposit 50 tokens into the rollup.
  const deposit = await build('deposit', { owner: alice.publicKey.toBase58(), mint: mint.toBase58(), amount: 50_000_000 });
  assert.equal(deposit.kind, 'deposit');
  await signAndSend(deposit, alice);
  assert.equal(await amountOf(base, aliceAta), aliceBase0 - 50_000_000n);
  await untilAmount(er, aliceAta, 50_000_000n, 'the deposit to show on the rollup');
  await assert.rejects(() => new Connection(ferry.ephemeral, 'confirmed').getAccountInfo(aliceAta), /private/);

  // 2. a private transfer of 10 tokens from alice's rollup balance to bob on base, in 2 pieces.
  const transfer = await build('transfer', {
    from: alice.publicKey.toBase58(), to: bob.toBase58(), mint: mint.toBase58(), amount: 10_000_000,
    visibility: 'private', fromBalance: 'ephemeral', toBalance: 'base', split: 2,
  });
  assert.equal(transfer.sendTo, 'ephemeral');
  await signAndSend(transfer, alice);
  await untilAmount(base, bobAta, bobBase0 + 10_000_000n, "bob's private payout on base");
  // The recipient gets the amount; the fees the build announced come on top.
  const aliceEr = 40_000_000n - BigInt(transfer.fees.tokens);
  await untilAmount(er, aliceAta, aliceEr, "alice's rollup balance after the transfer and its fees");

  // 3. withdraw 20 tokens back to base.
  const withdraw = await build('withdraw', { owner: alice.publicKey.toBase58(), mint: mint.toBase58(), amount: 20_000_000 });
  await signAndSend(withdraw, alice);
  await untilAmount(base, aliceAta, aliceBase0 - 50_000_000n + 20_000_000n, 'the withdrawal to land on base');
  await untilAmount(er, aliceAta, aliceEr - 20_000_000n, 'the withdrawal to leave the rollup');
});
