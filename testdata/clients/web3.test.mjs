// @solana/web3.js 1.x and @solana/spl-token against both chain nodes of a
// real `ferry serve`, used exactly as their documentation shows: the
// Connection is given only the http URL and derives the websocket itself,
// and every send confirms through signatureSubscribe.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, TransactionInstruction,
  sendAndConfirmTransaction,
} from '@solana/web3.js';
import {
  NATIVE_MINT, TOKEN_PROGRAM_ID, ACCOUNT_SIZE, closeAccount, createMint, createWrappedNativeAccount,
  getAccount, getAssociatedTokenAddressSync, getOrCreateAssociatedTokenAccount, mintTo, syncNative, transfer,
} from '@solana/spl-token';

import { base58, closeWebsocket, startFerry, untilSubscribed, withTimeout } from './harness.mjs';

const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

let ferry;
let base;
let er;
let payer;

before(async () => {
  ferry = await startFerry();
  base = new Connection(ferry.rpc, 'confirmed');
  er = new Connection(ferry.ephemeral, 'confirmed');
  payer = Keypair.generate();
  const sig = await base.requestAirdrop(payer.publicKey, 10 * LAMPORTS_PER_SOL);
  const bh = await base.getLatestBlockhash();
  // The blockhash strategy: signatureSubscribe plus block-height polling.
  const res = await withTimeout(base.confirmTransaction({ signature: sig, ...bh }, 'confirmed'), 20000, 'airdrop confirmation');
  assert.equal(res.value.err, null);
});

after(async () => {
  await Promise.all([closeWebsocket(base), closeWebsocket(er)]);
  await ferry?.stop();
});

test('web3.js derives the websocket URL from the RPC port', () => {
  // What web3.js does internally (makeWebsocketUrl): same host, port + 1.
  const derived = new URL(ferry.rpc);
  derived.protocol = 'ws:';
  derived.port = String(Number(derived.port) + 1);
  assert.equal(base._rpcWsEndpoint.replace(/\/$/, ''), derived.toString().replace(/\/$/, ''));
});

test('sendAndConfirmTransaction: a SOL transfer on base', async () => {
  const to = Keypair.generate().publicKey;
  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1234567 }));
  const sig = await withTimeout(sendAndConfirmTransaction(base, tx, [payer]), 20000, 'sendAndConfirmTransaction');
  assert.equal(typeof sig, 'string');
  assert.equal(await base.getBalance(to), 1234567);
  const status = await base.getSignatureStatus(sig);
  assert.ok(['confirmed', 'finalized'].includes(status.value.confirmationStatus));
});

test('spl-token helpers: createMint, getOrCreateAssociatedTokenAccount, mintTo, transfer', async () => {
  const mint = await withTimeout(createMint(base, payer, payer.publicKey, null, 6), 20000, 'createMint');
  const alice = Keypair.generate();
  const bob = Keypair.generate();
  const aliceAta = await getOrCreateAssociatedTokenAccount(base, payer, mint, alice.publicKey);
  const bobAta = await getOrCreateAssociatedTokenAccount(base, payer, mint, bob.publicKey);
  assert.equal(aliceAta.address.toBase58(), getAssociatedTokenAddressSync(mint, alice.publicKey).toBase58());
  await mintTo(base, payer, mint, aliceAta.address, payer, 5_000_000n);
  await transfer(base, payer, aliceAta.address, bobAta.address, alice, 1_250_000n);
  assert.equal((await getAccount(base, aliceAta.address)).amount, 3_750_000n);
  assert.equal((await getAccount(base, bobAta.address)).amount, 1_250_000n);
  // Calling it again finds the existing account instead of failing.
  const again = await getOrCreateAssociatedTokenAccount(base, payer, mint, bob.publicKey);
  assert.equal(again.amount, 1_250_000n);

  // getProgramAccounts with the filters dApps use to list a wallet's tokens.
  const listed = await base.getProgramAccounts(TOKEN_PROGRAM_ID, {
    filters: [{ dataSize: ACCOUNT_SIZE }, { memcmp: { offset: 32, bytes: bob.publicKey.toBase58() } }],
  });
  assert.deepEqual(listed.map((a) => a.pubkey.toBase58()), [bobAta.address.toBase58()]);
  const byMint = await base.getProgramAccounts(TOKEN_PROGRAM_ID, {
    filters: [{ dataSize: ACCOUNT_SIZE }, { memcmp: { offset: 0, bytes: mint.toBase58() } }],
  });
  assert.deepEqual(
    byMint.map((a) => a.pubkey.toBase58()).sort(),
    [aliceAta.address.toBase58(), bobAta.address.toBase58()].sort(),
  );
  const parsed = await base.getParsedProgramAccounts(TOKEN_PROGRAM_ID, {
    filters: [{ dataSize: ACCOUNT_SIZE }, { memcmp: { offset: 32, bytes: alice.publicKey.toBase58() } }],
  });
  assert.equal(parsed.length, 1);
  assert.equal(parsed[0].account.data.parsed.info.tokenAmount.amount, '3750000');
});

test('wrapped SOL: createWrappedNativeAccount, syncNative, jsonParsed, closeAccount', async () => {
  const owner = Keypair.generate();
  const fund = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: owner.publicKey, lamports: 2 * LAMPORTS_PER_SOL }));
  await sendAndConfirmTransaction(base, fund, [payer]);

  const mintInfo = await base.getParsedAccountInfo(NATIVE_MINT);
  assert.ok(mintInfo.value, 'the native mint exists');
  assert.equal(mintInfo.value.data.parsed.type, 'mint');
  assert.equal(mintInfo.value.data.parsed.info.decimals, 9);

  const wsol = await withTimeout(createWrappedNativeAccount(base, owner, owner.publicKey, 500_000_000), 20000, 'createWrappedNativeAccount');
  assert.equal(wsol.toBase58(), getAssociatedTokenAddressSync(NATIVE_MINT, owner.publicKey).toBase58());
  let acct = await getAccount(base, wsol);
  assert.equal(acct.isNative, true);
  assert.equal(acct.amount, 500_000_000n);

  // Lamports sent to the account count only after SyncNative.
  await sendAndConfirmTransaction(base, new Transaction().add(
    SystemProgram.transfer({ fromPubkey: owner.publicKey, toPubkey: wsol, lamports: 100_000_000 })), [owner]);
  assert.equal((await getAccount(base, wsol)).amount, 500_000_000n);
  await syncNative(base, owner, wsol);
  acct = await getAccount(base, wsol);
  assert.equal(acct.amount, 600_000_000n);

  const parsed = await base.getParsedTokenAccountsByOwner(owner.publicKey, { programId: TOKEN_PROGRAM_ID });
  assert.equal(parsed.value.length, 1);
  const info = parsed.value[0].account.data.parsed.info;
  assert.equal(info.isNative, true);
  assert.equal(info.mint, NATIVE_MINT.toBase58());
  assert.equal(info.tokenAmount.amount, '600000000');
  assert.equal(info.rentExemptReserve.amount, String(await base.getMinimumBalanceForRentExemption(ACCOUNT_SIZE)));

  const before = await base.getBalance(owner.publicKey);
  const accountLamports = await base.getBalance(wsol);
  await closeAccount(base, owner, wsol, owner.publicKey, owner);
  assert.equal(await base.getAccountInfo(wsol), null);
  // Closing returns every lamport (amount and rent reserve); owner paid one fee.
  assert.equal(await base.getBalance(owner.publicKey), before + accountLamports - 5000);
});

test('subscriptions: account, program, logs, signature, slot and root', async () => {
  const watched = Keypair.generate().publicKey;
  const gotAccount = new Promise((resolve) => {
    const id = base.onAccountChange(watched, (info, ctx) => {
      base.removeAccountChangeListener(id);
      resolve({ info, ctx });
    }, { commitment: 'confirmed' });
  });
  const gotProgram = new Promise((resolve) => {
    const id = base.onProgramAccountChange(SystemProgram.programId, (keyed, ctx) => {
      if (keyed.accountId.equals(watched)) {
        base.removeProgramAccountChangeListener(id);
        resolve({ keyed, ctx });
      }
    }, { commitment: 'confirmed', filters: [{ dataSize: 0 }] });
  });
  const gotLogs = new Promise((resolve) => {
    const id = base.onLogs(watched, (logs, ctx) => {
      base.removeOnLogsListener(id);
      resolve({ logs, ctx });
    }, 'confirmed');
  });
  const slots = [];
  const gotSlots = new Promise((resolve) => {
    const id = base.onSlotChange((s) => {
      slots.push(s);
      if (slots.length >= 3) {
        base.removeSlotChangeListener(id);
        resolve();
      }
    });
  });
  const gotRoot = new Promise((resolve) => {
    const id = base.onRootChange((root) => {
      base.removeRootChangeListener(id);
      resolve(root);
    });
  });

  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: watched, lamports: 7_000_000 }));
  tx.feePayer = payer.publicKey;
  const { blockhash, lastValidBlockHeight } = await base.getLatestBlockhash();
  tx.recentBlockhash = blockhash;
  tx.sign(payer);
  // web3.js removes a signature listener after its first notification,
  // so "received" (enableReceivedNotification) and the status at
  // "confirmed" are two subscriptions.
  const gotReceived = new Promise((resolve) => {
    base.onSignatureWithOptions(base58(tx.signature), (n, ctx) => resolve({ n, ctx }),
      { commitment: 'confirmed', enableReceivedNotification: true });
  });
  const gotSignature = new Promise((resolve) => {
    base.onSignature(base58(tx.signature), (result, ctx) => resolve({ result, ctx }), 'confirmed');
  });
  // Every subscription is active before the transaction can land.
  await untilSubscribed(base);
  const sig = await base.sendRawTransaction(tx.serialize());

  const acc = await withTimeout(gotAccount, 20000, 'accountNotification');
  assert.equal(acc.info.lamports, 7_000_000);
  assert.ok(acc.ctx.slot > 0);
  const prog = await withTimeout(gotProgram, 20000, 'programNotification');
  assert.equal(prog.keyed.accountInfo.lamports, 7_000_000);
  const logs = await withTimeout(gotLogs, 20000, 'logsNotification');
  assert.equal(logs.logs.signature, sig);
  assert.equal(logs.logs.err, null);
  assert.ok(logs.logs.logs.some((l) => l.startsWith('Program 11111111111111111111111111111111 invoke')));
  const received = await withTimeout(gotReceived, 20000, 'receivedSignature notification');
  assert.equal(received.n.type, 'received');
  const s = await withTimeout(gotSignature, 20000, 'signatureNotification');
  assert.equal(s.result.err, null);
  assert.ok(s.ctx.slot >= received.ctx.slot);
  await withTimeout(gotSlots, 20000, 'slotNotifications');
  for (let i = 1; i < slots.length; i++) assert.ok(slots[i].slot > slots[i - 1].slot);
  const root = await withTimeout(gotRoot, 30000, 'rootNotification');
  assert.ok(Number.isInteger(root) && root >= 0);
  const conf = await base.confirmTransaction({ signature: sig, blockhash, lastValidBlockHeight }, 'confirmed');
  assert.equal(conf.value.err, null);
});

test('the ephemeral node: sendAndConfirmTransaction and a subscription through the derived websocket', async () => {
  // Rollup transactions are free and any keypair may pay, funded or not.
  const signer = Keypair.generate();
  const tx = new Transaction().add(new TransactionInstruction({
    keys: [{ pubkey: signer.publicKey, isSigner: true, isWritable: false }],
    programId: MEMO_PROGRAM_ID, data: Buffer.from('ferry client suite'),
  }));
  const gotLogs = new Promise((resolve) => {
    const id = er.onLogs(MEMO_PROGRAM_ID, (logs) => {
      if (logs.err === null) {
        er.removeOnLogsListener(id);
        resolve(logs);
      }
    }, 'confirmed');
  });
  await untilSubscribed(er);
  const sig = await withTimeout(sendAndConfirmTransaction(er, tx, [signer]), 20000, 'sendAndConfirmTransaction on the rollup');
  const logs = await withTimeout(gotLogs, 20000, 'logsNotification on the rollup');
  assert.equal(logs.signature, sig);
  const got = await er.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  assert.equal(got.meta.fee, 0);
});

test('a failed transaction is reported as failed through the websocket', async () => {
  const poor = Keypair.generate();
  const fund = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: poor.publicKey, lamports: 10_000_000 }));
  await sendAndConfirmTransaction(base, fund, [payer]);
  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: poor.publicKey, toPubkey: payer.publicKey, lamports: 50_000_000 }));
  // Depending on whether the status or the notification arrives first,
  // web3.js rejects with an Error naming the status or with the
  // TransactionError itself.
  await assert.rejects(
    () => sendAndConfirmTransaction(base, tx, [poor], { skipPreflight: true }),
    (err) => (err instanceof Error ? err.message : JSON.stringify(err)).includes('"Custom":1'),
  );
});
