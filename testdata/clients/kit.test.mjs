// @solana/kit with @solana-program/system and @solana-program/token against
// both chain nodes of a real `ferry serve`: the factories that confirm
// through rpcSubscriptions (airdropFactory, sendAndConfirmTransactionFactory)
// and the subscription iterators, used as kit's documentation shows.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  address, airdropFactory, appendTransactionMessageInstructions, createSolanaRpc, createSolanaRpcSubscriptions,
  createTransactionMessage, generateKeyPairSigner, getSignatureFromTransaction, lamports, pipe,
  sendAndConfirmTransactionFactory, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  TOKEN_PROGRAM_ADDRESS, fetchMint, fetchToken, findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstructionAsync,
  getInitializeMint2Instruction, getMintSize, getMintToInstruction, getTransferCheckedInstruction,
} from '@solana-program/token';

import { startFerry, withTimeout } from './harness.mjs';

let ferry;
const nodes = {};

function wsOf(httpUrl) {
  // The stock convention: same host, RPC port + 1.
  const u = new URL(httpUrl);
  u.protocol = 'ws:';
  u.port = String(Number(u.port) + 1);
  return u.toString();
}

function node(httpUrl) {
  const rpc = createSolanaRpc(httpUrl);
  const rpcSubscriptions = createSolanaRpcSubscriptions(wsOf(httpUrl));
  return {
    rpc, rpcSubscriptions,
    sendAndConfirm: sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions }),
    airdrop: airdropFactory({ rpc, rpcSubscriptions }),
  };
}

async function send(n, feePayer, instructions, commitment = 'confirmed') {
  const { value: latestBlockhash } = await n.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latestBlockhash, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  await withTimeout(n.sendAndConfirm(signed, { commitment }), 20000, 'sendAndConfirmTransaction');
  return getSignatureFromTransaction(signed);
}

let payer;

before(async () => {
  ferry = await startFerry();
  nodes.base = node(ferry.rpc);
  nodes.er = node(ferry.ephemeral);
  payer = await generateKeyPairSigner();
  await withTimeout(
    nodes.base.airdrop({ recipientAddress: payer.address, lamports: lamports(5_000_000_000n), commitment: 'confirmed' }),
    20000, 'airdrop');
});

after(async () => {
  await ferry?.stop();
});

test('kit: airdrop and a SOL transfer confirmed through rpcSubscriptions', async () => {
  const { value } = await nodes.base.rpc.getBalance(payer.address, { commitment: 'confirmed' }).send();
  assert.equal(value, 5_000_000_000n);
  const to = await generateKeyPairSigner();
  await send(nodes.base, payer, [getTransferSolInstruction({ source: payer, destination: to.address, amount: 1_000_000n })]);
  const got = await nodes.base.rpc.getBalance(to.address, { commitment: 'confirmed' }).send();
  assert.equal(got.value, 1_000_000n);
});

test('kit: a mint, an ATA, mintTo and transferChecked with @solana-program/token', async () => {
  const mint = await generateKeyPairSigner();
  const space = BigInt(getMintSize());
  const rent = await nodes.base.rpc.getMinimumBalanceForRentExemption(space).send();
  await send(nodes.base, payer, [
    getCreateAccountInstruction({ payer, newAccount: mint, lamports: rent, space, programAddress: TOKEN_PROGRAM_ADDRESS }),
    getInitializeMint2Instruction({ mint: mint.address, decimals: 2, mintAuthority: payer.address }),
  ]);
  const owner = await generateKeyPairSigner();
  const [ata] = await findAssociatedTokenPda({ mint: mint.address, owner: owner.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [payerAta] = await findAssociatedTokenPda({ mint: mint.address, owner: payer.address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  await send(nodes.base, payer, [
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, mint: mint.address, owner: owner.address }),
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, mint: mint.address, owner: payer.address }),
    getMintToInstruction({ mint: mint.address, token: payerAta, mintAuthority: payer, amount: 10_000n }),
    getTransferCheckedInstruction({ source: payerAta, mint: mint.address, destination: ata, authority: payer, amount: 2_500n, decimals: 2 }),
  ]);
  const m = await fetchMint(nodes.base.rpc, mint.address, { commitment: 'confirmed' });
  assert.equal(m.data.supply, 10_000n);
  const t = await fetchToken(nodes.base.rpc, ata, { commitment: 'confirmed' });
  assert.equal(t.data.amount, 2_500n);
  assert.equal(t.data.owner, owner.address);

  const listed = await nodes.base.rpc.getProgramAccounts(TOKEN_PROGRAM_ADDRESS, {
    commitment: 'confirmed', encoding: 'base64',
    filters: [{ dataSize: 165n }, { memcmp: { offset: 32n, bytes: owner.address, encoding: 'base58' } }],
  }).send();
  assert.deepEqual(listed.map((a) => a.pubkey), [ata]);
});

test('kit: slot and account notifications', async () => {
  const abort = new AbortController();
  try {
    const slots = await nodes.base.rpcSubscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
    const seen = [];
    for await (const n of slots) {
      seen.push(n.slot);
      if (seen.length === 3) break;
    }
    assert.ok(seen[1] > seen[0] && seen[2] > seen[1]);

    const watched = await generateKeyPairSigner();
    const accounts = await nodes.base.rpcSubscriptions
      .accountNotifications(watched.address, { commitment: 'confirmed', encoding: 'base64' })
      .subscribe({ abortSignal: abort.signal });
    const first = (async () => {
      for await (const n of accounts) return n;
    })();
    await send(nodes.base, payer, [getTransferSolInstruction({ source: payer, destination: watched.address, amount: 3_000_000n })]);
    const n = await withTimeout(first, 20000, 'accountNotification');
    assert.equal(n.value.lamports, 3_000_000n);
    assert.equal(n.value.owner, address('11111111111111111111111111111111'));
  } finally {
    abort.abort();
  }
});

test('kit: sendAndConfirm on the ephemeral node (free, any fee payer)', async () => {
  const signer = await generateKeyPairSigner();
  const memo = {
    programAddress: address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'),
    accounts: [{ address: signer.address, role: 2, signer }], // READONLY_SIGNER
    data: new TextEncoder().encode('kit on the rollup'),
  };
  const sig = await send(nodes.er, signer, [memo]);
  const tx = await nodes.er.rpc.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  assert.equal(tx.meta.err, null);
  assert.equal(tx.meta.fee, 0n);
});
