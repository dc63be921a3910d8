// Durable nonces, v0 transactions through an address lookup table and
// Token-2022 mints with extensions, from @solana/web3.js 1.x and
// @solana/spl-token against a real `ferry serve`, with the helpers those
// libraries document for them.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  AddressLookupTableProgram, Connection, Keypair, LAMPORTS_PER_SOL, NONCE_ACCOUNT_LENGTH, NonceAccount, SystemProgram,
  Transaction, TransactionMessage, VersionedTransaction, sendAndConfirmTransaction,
} from '@solana/web3.js';
import {
  ExtensionType, TOKEN_2022_PROGRAM_ID, amountToUiAmount, closeAccount, createInitializeInterestBearingMintInstruction,
  createInitializeMetadataPointerInstruction, createInitializeMintCloseAuthorityInstruction, createInitializeMintInstruction,
  createInitializeTransferFeeConfigInstruction, getAccount, getExtensionTypes, getMint, getMintLen,
  getOrCreateAssociatedTokenAccount, getTokenMetadata, getTransferFeeAmount, mintTo, tokenMetadataInitializeWithRentTransfer,
  tokenMetadataUpdateFieldWithRentTransfer, transferCheckedWithFee, withdrawWithheldTokensFromAccounts,
} from '@solana/spl-token';

import { closeWebsocket, startFerry, withTimeout } from './harness.mjs';

let ferry;
let base;
let payer;

before(async () => {
  ferry = await startFerry();
  base = new Connection(ferry.rpc, 'confirmed');
  payer = Keypair.generate();
  const sig = await base.requestAirdrop(payer.publicKey, 20 * LAMPORTS_PER_SOL);
  const bh = await base.getLatestBlockhash();
  const res = await withTimeout(base.confirmTransaction({ signature: sig, ...bh }, 'confirmed'), 20000, 'airdrop confirmation');
  assert.equal(res.value.err, null);
});

after(async () => {
  await closeWebsocket(base);
  await ferry?.stop();
});

const confirm = (tx, signers) => withTimeout(sendAndConfirmTransaction(base, tx, signers), 20000, 'sendAndConfirmTransaction');

/** waitForSlotAfter waits until the confirmed slot is past slot. */
async function waitForSlotAfter(slot) {
  for (let i = 0; i < 200; i++) {
    if ((await base.getSlot('confirmed')) > slot) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`slot ${slot} never passed`);
}

/**
 * sendWithNonce signs a durable-nonce transaction (web3.js puts
 * AdvanceNonceAccount first and the nonce as its blockhash), sends it
 * without preflight and confirms it with the durable-nonce strategy.
 */
async function sendWithNonce(nonceAccount, authority, instructions) {
  const { context, value } = await base.getNonceAndContext(nonceAccount, 'confirmed');
  const tx = new Transaction({
    feePayer: payer.publicKey,
    nonceInfo: { nonce: value.nonce, nonceInstruction: SystemProgram.nonceAdvance({ noncePubkey: nonceAccount, authorizedPubkey: authority.publicKey }) },
    minContextSlot: context.slot,
  }).add(...instructions);
  tx.sign(payer, ...(authority === payer ? [] : [authority]));
  const raw = tx.serialize();
  const signature = await base.sendRawTransaction(raw, { skipPreflight: true });
  let err;
  try {
    const res = await withTimeout(base.confirmTransaction({
      signature, nonceAccountPubkey: nonceAccount, nonceValue: value.nonce, minContextSlot: context.slot,
    }, 'confirmed'), 20000, 'durable-nonce confirmation');
    err = res.value.err;
  } catch (e) {
    // The durable-nonce strategy throws the transaction's error itself.
    if (e instanceof Error) throw e;
    err = e;
  }
  return { signature, err, nonce: value.nonce, raw };
}

test('durable nonce: create, a nonce transaction, a failed one still advances the nonce, authorize, withdraw', async () => {
  const nonce = Keypair.generate();
  const rent = await base.getMinimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH);
  await confirm(new Transaction().add(SystemProgram.createNonceAccount({
    fromPubkey: payer.publicKey, noncePubkey: nonce.publicKey, authorizedPubkey: payer.publicKey, lamports: rent,
  })), [payer, nonce]);
  const info = await base.getAccountInfo(nonce.publicKey);
  assert.equal(info.owner.toBase58(), SystemProgram.programId.toBase58());
  assert.equal(info.data.length, NONCE_ACCOUNT_LENGTH);
  const state = NonceAccount.fromAccountData(info.data);
  assert.equal(state.authorizedPubkey.toBase58(), payer.publicKey.toBase58());
  assert.equal(state.feeCalculator.lamportsPerSignature, 5000);

  // A transfer signed against the nonce instead of a recent blockhash.
  const to = Keypair.generate().publicKey;
  const sent = await sendWithNonce(nonce.publicKey, payer, [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL })]);
  assert.equal(sent.err, null);
  assert.equal(sent.nonce, state.nonce);
  assert.equal(await base.getBalance(to), LAMPORTS_PER_SOL);
  const advanced = (await base.getNonce(nonce.publicKey, 'confirmed')).nonce;
  assert.notEqual(advanced, state.nonce, 'the nonce advanced');
  // The same signed bytes cannot land again: their nonce is used up.
  await assert.rejects(base.sendRawTransaction(sent.raw), /Blockhash not found|already been processed/);

  // A failing nonce transaction is recorded, pays its fee and advances
  // the nonce, so it cannot be replayed either.
  const before = await base.getBalance(payer.publicKey);
  const failed = await sendWithNonce(nonce.publicKey, payer, [
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1000 * LAMPORTS_PER_SOL }),
  ]);
  assert.deepEqual(failed.err, { InstructionError: [1, { Custom: 1 }] });
  // web3.js's durable-nonce strategy reports a failure once it sees it
  // processed; wait for the record to be confirmed before reading balances.
  let failedTx = null;
  for (let i = 0; i < 100 && !failedTx; i++) {
    failedTx = await base.getTransaction(failed.signature, { commitment: 'confirmed' });
    if (!failedTx) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(failedTx, 'the failed nonce transaction is recorded');
  assert.equal(failedTx.meta.fee, 5000);
  assert.deepEqual(failedTx.meta.err, { InstructionError: [1, { Custom: 1 }] });
  assert.equal(before - (await base.getBalance(payer.publicKey)), 5000, 'the fee of a failed nonce transaction is charged');
  assert.notEqual((await base.getNonce(nonce.publicKey, 'confirmed')).nonce, advanced, 'the failed transaction advanced the nonce');

  // Hand the nonce to a new authority, which then withdraws it all.
  const authority = Keypair.generate();
  await confirm(new Transaction().add(SystemProgram.nonceAuthorize({
    noncePubkey: nonce.publicKey, authorizedPubkey: payer.publicKey, newAuthorizedPubkey: authority.publicKey,
  })), [payer]);
  assert.equal((await base.getNonce(nonce.publicKey, 'confirmed')).authorizedPubkey.toBase58(), authority.publicKey.toBase58());
  const parsed = await base.getParsedAccountInfo(nonce.publicKey);
  assert.equal(parsed.value.data.program, 'nonce');
  assert.equal(parsed.value.data.parsed.type, 'initialized');
  assert.equal(parsed.value.data.parsed.info.authority, authority.publicKey.toBase58());
  const sink = Keypair.generate().publicKey;
  await confirm(new Transaction().add(SystemProgram.nonceWithdraw({
    noncePubkey: nonce.publicKey, authorizedPubkey: authority.publicKey, toPubkey: sink, lamports: rent,
  })), [payer, authority]);
  assert.equal(await base.getAccountInfo(nonce.publicKey), null);
  assert.equal(await base.getBalance(sink), rent);
});

test('address lookup table: create and extend, getAddressLookupTable, a v0 transfer to three loaded accounts', async () => {
  const recentSlot = await base.getSlot('finalized');
  const [create, table] = AddressLookupTableProgram.createLookupTable({ authority: payer.publicKey, payer: payer.publicKey, recentSlot });
  const recipients = [Keypair.generate().publicKey, Keypair.generate().publicKey, Keypair.generate().publicKey];
  const extend = AddressLookupTableProgram.extendLookupTable({
    payer: payer.publicKey, authority: payer.publicKey, lookupTable: table, addresses: recipients,
  });
  const sig = await confirm(new Transaction().add(create, extend), [payer]);
  // Addresses appended in a slot are usable from the next one.
  const { value: [status] } = await base.getSignatureStatuses([sig]);
  await waitForSlotAfter(status.slot);

  const { value: lut } = await base.getAddressLookupTable(table);
  assert.ok(lut, 'getAddressLookupTable found the table');
  assert.deepEqual(lut.state.addresses.map((a) => a.toBase58()), recipients.map((a) => a.toBase58()));
  assert.equal(lut.state.authority.toBase58(), payer.publicKey.toBase58());
  assert.ok(lut.isActive());
  const parsed = await base.getParsedAccountInfo(table);
  assert.equal(parsed.value.data.program, 'address-lookup-table');
  assert.equal(parsed.value.data.parsed.type, 'lookupTable');
  assert.deepEqual(parsed.value.data.parsed.info.addresses, recipients.map((a) => a.toBase58()));

  const { blockhash, lastValidBlockHeight } = await base.getLatestBlockhash();
  const message = new TransactionMessage({
    payerKey: payer.publicKey, recentBlockhash: blockhash,
    instructions: recipients.map((to, i) => SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 * (i + 1) })),
  }).compileToV0Message([lut]);
  assert.equal(message.addressTableLookups.length, 1);
  assert.deepEqual(message.addressTableLookups[0].writableIndexes, [0, 1, 2]);
  const tx = new VersionedTransaction(message);
  tx.sign([payer]);
  const signature = await base.sendTransaction(tx);
  const res = await withTimeout(base.confirmTransaction({ signature, blockhash, lastValidBlockHeight }, 'confirmed'), 20000, 'v0 confirmation');
  assert.equal(res.value.err, null);
  for (const [i, to] of recipients.entries()) assert.equal(await base.getBalance(to), 1_000_000 * (i + 1));
  const got = await base.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  assert.equal(got.version, 0);
  assert.deepEqual(got.meta.loadedAddresses.writable.map((a) => a.toBase58()), recipients.map((a) => a.toBase58()));
  assert.deepEqual(got.meta.loadedAddresses.readonly, []);

  // A client that does not accept v0 is told so, as Agave does.
  await assert.rejects(base.getTransaction(signature, { commitment: 'confirmed' }), /Transaction version \(0\) is not supported/);
});

test('Token-2022: a mint with TransferFeeConfig, MintCloseAuthority, MetadataPointer + TokenMetadata and InterestBearingConfig', async () => {
  const mintKp = Keypair.generate();
  const mint = mintKp.publicKey;
  const exts = [ExtensionType.TransferFeeConfig, ExtensionType.MintCloseAuthority, ExtensionType.MetadataPointer, ExtensionType.InterestBearingConfig];
  const space = getMintLen(exts);
  await confirm(new Transaction().add(
    SystemProgram.createAccount({
      fromPubkey: payer.publicKey, newAccountPubkey: mint, space, programId: TOKEN_2022_PROGRAM_ID,
      lamports: await base.getMinimumBalanceForRentExemption(space),
    }),
    createInitializeTransferFeeConfigInstruction(mint, payer.publicKey, payer.publicKey, 50, 5_000n, TOKEN_2022_PROGRAM_ID),
    createInitializeMintCloseAuthorityInstruction(mint, payer.publicKey, TOKEN_2022_PROGRAM_ID),
    createInitializeMetadataPointerInstruction(mint, payer.publicKey, mint, TOKEN_2022_PROGRAM_ID),
    createInitializeInterestBearingMintInstruction(mint, payer.publicKey, 500, TOKEN_2022_PROGRAM_ID),
    createInitializeMintInstruction(mint, 2, payer.publicKey, null, TOKEN_2022_PROGRAM_ID),
  ), [payer, mintKp]);
  await tokenMetadataInitializeWithRentTransfer(base, payer, mint, payer.publicKey, payer, 'Ferry Test', 'FRY',
    'https://example.test/fry.json', [], { commitment: 'confirmed' }, TOKEN_2022_PROGRAM_ID);
  await tokenMetadataUpdateFieldWithRentTransfer(base, payer, mint, payer, 'color', 'blue', [], { commitment: 'confirmed' }, TOKEN_2022_PROGRAM_ID);

  const m = await getMint(base, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
  assert.equal(m.decimals, 2);
  assert.deepEqual(getExtensionTypes(m.tlvData).sort((a, b) => a - b), [...exts, ExtensionType.TokenMetadata].sort((a, b) => a - b));
  const meta = await getTokenMetadata(base, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
  assert.equal(meta.name, 'Ferry Test');
  assert.equal(meta.symbol, 'FRY');
  assert.deepEqual(meta.additionalMetadata, [['color', 'blue']]);

  // Accounts, a mint and a transfer that withholds its fee (50 bps).
  const alice = Keypair.generate();
  const bob = Keypair.generate();
  const aliceAta = await getOrCreateAssociatedTokenAccount(base, payer, mint, alice.publicKey, false, 'confirmed', undefined, TOKEN_2022_PROGRAM_ID);
  const bobAta = await getOrCreateAssociatedTokenAccount(base, payer, mint, bob.publicKey, false, 'confirmed', undefined, TOKEN_2022_PROGRAM_ID);
  await mintTo(base, payer, mint, aliceAta.address, payer, 1_000_000n, [], undefined, TOKEN_2022_PROGRAM_ID);
  await transferCheckedWithFee(base, payer, aliceAta.address, mint, bobAta.address, alice, 100_000n, 2, 500n, [], undefined, TOKEN_2022_PROGRAM_ID);
  let bobAcct = await getAccount(base, bobAta.address, 'confirmed', TOKEN_2022_PROGRAM_ID);
  assert.equal(bobAcct.amount, 99_500n);
  assert.equal(getTransferFeeAmount(bobAcct).withheldAmount, 500n);
  // A fee that is not what the mint says is refused (TokenError::FeeMismatch, 0x20).
  await assert.rejects(
    transferCheckedWithFee(base, payer, aliceAta.address, mint, bobAta.address, alice, 100_000n, 2, 499n, [], undefined, TOKEN_2022_PROGRAM_ID),
    /custom program error: 0x20/);

  // The withdraw-withheld authority collects the fee.
  await withdrawWithheldTokensFromAccounts(base, payer, mint, aliceAta.address, payer, [], [bobAta.address], undefined, TOKEN_2022_PROGRAM_ID);
  bobAcct = await getAccount(base, bobAta.address, 'confirmed', TOKEN_2022_PROGRAM_ID);
  assert.equal(getTransferFeeAmount(bobAcct).withheldAmount, 0n);
  assert.equal((await getAccount(base, aliceAta.address, 'confirmed', TOKEN_2022_PROGRAM_ID)).amount, 900_500n);

  // jsonParsed lists every extension as Agave's account decoder names it.
  const parsed = await base.getParsedAccountInfo(mint);
  assert.equal(parsed.value.data.program, 'spl-token-2022');
  const byName = Object.fromEntries(parsed.value.data.parsed.info.extensions.map((e) => [e.extension, e.state]));
  assert.deepEqual(Object.keys(byName).sort(),
    ['interestBearingConfig', 'metadataPointer', 'mintCloseAuthority', 'tokenMetadata', 'transferFeeConfig']);
  assert.equal(byName.transferFeeConfig.newerTransferFee.transferFeeBasisPoints, 50);
  assert.equal(byName.transferFeeConfig.newerTransferFee.maximumFee, 5000);
  assert.equal(byName.mintCloseAuthority.closeAuthority, payer.publicKey.toBase58());
  assert.equal(byName.metadataPointer.metadataAddress, mint.toBase58());
  assert.equal(byName.interestBearingConfig.currentRate, 500);
  assert.equal(byName.tokenMetadata.name, 'Ferry Test');
  assert.deepEqual(byName.tokenMetadata.additionalMetadata, [['color', 'blue']]);
  const bobParsed = await base.getParsedAccountInfo(bobAta.address);
  const bobExts = bobParsed.value.data.parsed.info.extensions.map((e) => e.extension).sort();
  assert.deepEqual(bobExts, ['immutableOwner', 'transferFeeAmount']);

  // The UI amount of an interest-bearing mint (AmountToUiAmount, through
  // a simulation's return data): 5% a year over a few seconds is ~1000.00.
  const ui = await amountToUiAmount(base, payer, mint, 100_000n, TOKEN_2022_PROGRAM_ID);
  assert.equal(typeof ui, 'string');
  assert.ok(Math.abs(Number(ui) - 1000) < 0.01, `UI amount ${ui}`);
});

test('Token-2022: MintCloseAuthority closes a mint without supply', async () => {
  const mintKp = Keypair.generate();
  const space = getMintLen([ExtensionType.MintCloseAuthority]);
  const lamports = await base.getMinimumBalanceForRentExemption(space);
  await confirm(new Transaction().add(
    SystemProgram.createAccount({ fromPubkey: payer.publicKey, newAccountPubkey: mintKp.publicKey, space, lamports, programId: TOKEN_2022_PROGRAM_ID }),
    createInitializeMintCloseAuthorityInstruction(mintKp.publicKey, payer.publicKey, TOKEN_2022_PROGRAM_ID),
    createInitializeMintInstruction(mintKp.publicKey, 0, payer.publicKey, null, TOKEN_2022_PROGRAM_ID),
  ), [payer, mintKp]);
  const sink = Keypair.generate().publicKey;
  await closeAccount(base, payer, mintKp.publicKey, sink, payer, [], undefined, TOKEN_2022_PROGRAM_ID);
  assert.equal(await base.getAccountInfo(mintKp.publicKey), null);
  assert.equal(await base.getBalance(sink), lamports);
});
