// Durable nonces, v0 transactions through an address lookup table and a
// Token-2022 mint with extensions from @solana/kit against a real
// `ferry serve`: kit's durable-nonce lifetime and its confirmation factory,
// fetchAddressesForLookupTables + compressTransactionMessageUsingAddressLookupTables,
// and @solana-program/token's instructions pointed at Token-2022.
// Instructions no @solana-program package pinned here builds for kit 8
// (the lookup-table program, Token-2022's extension initializers) are
// written as kit instructions from their documented layouts.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  AccountRole, address, airdropFactory, appendTransactionMessageInstructions, compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc, createSolanaRpcSubscriptions, createTransactionMessage, fetchAddressesForLookupTables, generateKeyPairSigner,
  getAddressEncoder, getProgramDerivedAddress, getSignatureFromTransaction, getU64Encoder, lamports, pipe,
  sendAndConfirmDurableNonceTransactionFactory, sendAndConfirmTransactionFactory, setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash, setTransactionMessageLifetimeUsingDurableNonce, signTransactionMessageWithSigners,
} from '@solana/kit';
import {
  SYSTEM_PROGRAM_ADDRESS, fetchNonce, getCreateAccountInstruction, getInitializeNonceAccountInstruction, getTransferSolInstruction,
} from '@solana-program/system';
import {
  findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstructionAsync, getInitializeMint2Instruction, getMintToInstruction,
  getTransferCheckedInstruction,
} from '@solana-program/token';

import { startFerry, withTimeout } from './harness.mjs';

const TOKEN_2022 = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
const ALT_PROGRAM = address('AddressLookupTab1e1111111111111111111111111');
const NONCE_ACCOUNT_SIZE = 80n;

let ferry;
let rpc;
let rpcSubscriptions;
let payer;

before(async () => {
  ferry = await startFerry();
  rpc = createSolanaRpc(ferry.rpc);
  const ws = new URL(ferry.rpc);
  ws.protocol = 'ws:';
  ws.port = String(Number(ws.port) + 1);
  rpcSubscriptions = createSolanaRpcSubscriptions(ws.toString());
  payer = await generateKeyPairSigner();
  await withTimeout(airdropFactory({ rpc, rpcSubscriptions })(
    { recipientAddress: payer.address, lamports: lamports(10_000_000_000n), commitment: 'confirmed' }), 20000, 'airdrop');
});

after(async () => {
  await ferry?.stop();
});

async function send(instructions, { tables } = {}) {
  const { value: latestBlockhash } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  let message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latestBlockhash, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  if (tables) message = compressTransactionMessageUsingAddressLookupTables(message, tables);
  const signed = await signTransactionMessageWithSigners(message);
  await withTimeout(sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions })(signed, { commitment: 'confirmed' }), 20000, 'send');
  return { signature: getSignatureFromTransaction(signed), message };
}

const balance = async (a) => (await rpc.getBalance(a, { commitment: 'confirmed' }).send()).value;

test('kit: a durable-nonce transaction confirmed with sendAndConfirmDurableNonceTransactionFactory', async () => {
  const nonceAccount = await generateKeyPairSigner();
  const rent = await rpc.getMinimumBalanceForRentExemption(NONCE_ACCOUNT_SIZE).send();
  await send([
    getCreateAccountInstruction({ payer, newAccount: nonceAccount, lamports: rent, space: NONCE_ACCOUNT_SIZE, programAddress: SYSTEM_PROGRAM_ADDRESS }),
    getInitializeNonceAccountInstruction({ nonceAccount: nonceAccount.address, nonceAuthority: payer.address }),
  ]);
  const { data: first } = await fetchNonce(rpc, nonceAccount.address, { commitment: 'confirmed' });
  assert.equal(first.authority, payer.address);
  assert.equal(first.lamportsPerSignature, 5000n);

  const to = await generateKeyPairSigner();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingDurableNonce(
      { nonce: first.blockhash, nonceAccountAddress: nonceAccount.address, nonceAuthorityAddress: payer.address }, m),
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: to.address, amount: 1_000_000_000n })], m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  await withTimeout(sendAndConfirmDurableNonceTransactionFactory({ rpc, rpcSubscriptions })(signed, { commitment: 'confirmed' }),
    20000, 'durable-nonce confirmation');
  assert.equal(await balance(to.address), 1_000_000_000n);
  const { data: next } = await fetchNonce(rpc, nonceAccount.address, { commitment: 'confirmed' });
  assert.notEqual(next.blockhash, first.blockhash, 'the nonce advanced');
  const tx = await rpc.getTransaction(getSignatureFromTransaction(signed),
    { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  assert.equal(tx.meta.err, null);
  assert.equal(tx.transaction.message.recentBlockhash, first.blockhash);
});

test('kit: a lookup table made with raw instructions, then a v0 transfer compressed through it', async () => {
  const recentSlot = await rpc.getSlot({ commitment: 'finalized' }).send();
  const [table, bump] = await getProgramDerivedAddress({
    programAddress: ALT_PROGRAM, seeds: [getAddressEncoder().encode(payer.address), getU64Encoder().encode(recentSlot)],
  });
  const recipients = await Promise.all([1, 2, 3].map(() => generateKeyPairSigner().then((s) => s.address)));
  // CreateLookupTable {recent_slot, bump_seed} and ExtendLookupTable
  // {new_addresses}: bincode, a u32 variant then the fields.
  const create = {
    programAddress: ALT_PROGRAM,
    accounts: [
      { address: table, role: AccountRole.WRITABLE },
      { address: payer.address, role: AccountRole.READONLY_SIGNER, signer: payer },
      { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
      { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ],
    data: Uint8Array.from([0, 0, 0, 0, ...getU64Encoder().encode(recentSlot), bump]),
  };
  const extend = {
    programAddress: ALT_PROGRAM,
    accounts: create.accounts,
    data: Uint8Array.from([2, 0, 0, 0, ...getU64Encoder().encode(BigInt(recipients.length)),
      ...recipients.flatMap((a) => [...getAddressEncoder().encode(a)])]),
  };
  const { signature } = await send([create, extend]);
  // Addresses appended in a slot are usable from the next one.
  const { value: [status] } = await rpc.getSignatureStatuses([signature]).send();
  for (let i = 0; i < 200 && (await rpc.getSlot({ commitment: 'confirmed' }).send()) <= status.slot; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }

  const tables = await fetchAddressesForLookupTables([table], rpc, { commitment: 'confirmed' });
  assert.deepEqual(tables[table], recipients);
  const sent = await send(recipients.map((to) => getTransferSolInstruction({ source: payer, destination: to, amount: 2_000_000n })), { tables });
  assert.equal(Object.keys(sent.message.instructions[0].accounts[1]).includes('lookupTableAddress'), true, 'kit loaded the recipients through the table');
  for (const to of recipients) assert.equal(await balance(to), 2_000_000n);
  const tx = await rpc.getTransaction(sent.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  assert.equal(tx.version, 0);
  const [lookup] = tx.transaction.message.addressTableLookups;
  assert.equal(tx.transaction.message.addressTableLookups.length, 1);
  assert.equal(lookup.accountKey, table);
  assert.deepEqual([...lookup.writableIndexes].sort(), [0, 1, 2]);
  assert.deepEqual(lookup.readonlyIndexes, []);
  // Loaded addresses come in the order the message's indexes name them.
  assert.deepEqual(tx.meta.loadedAddresses.writable, lookup.writableIndexes.map((i) => recipients[i]));
});

test('kit: a Token-2022 mint with TransferFeeConfig and MintCloseAuthority; a transfer withholds its fee', async () => {
  const mint = await generateKeyPairSigner();
  // Base mint (82) padded to 165, the account type, then the TLV entries:
  // MintCloseAuthority (4 + 32) and TransferFeeConfig (4 + 108).
  const space = 166n + 36n + 112n;
  const rent = await rpc.getMinimumBalanceForRentExemption(space).send();
  const key = (a) => [...getAddressEncoder().encode(a)];
  const u16 = (v) => [v & 0xff, v >> 8];
  const initCloseAuthority = {
    programAddress: TOKEN_2022, accounts: [{ address: mint.address, role: AccountRole.WRITABLE }],
    data: Uint8Array.from([25, 1, ...key(payer.address)]),
  };
  const initTransferFee = {
    programAddress: TOKEN_2022, accounts: [{ address: mint.address, role: AccountRole.WRITABLE }],
    data: Uint8Array.from([26, 0, 1, ...key(payer.address), 1, ...key(payer.address), ...u16(100), ...getU64Encoder().encode(1_000_000n)]),
  };
  await send([
    getCreateAccountInstruction({ payer, newAccount: mint, lamports: rent, space, programAddress: TOKEN_2022 }),
    initCloseAuthority,
    initTransferFee,
    getInitializeMint2Instruction({ mint: mint.address, decimals: 2, mintAuthority: payer.address }, { programAddress: TOKEN_2022 }),
  ]);
  const owner = await generateKeyPairSigner();
  const [payerAta] = await findAssociatedTokenPda({ mint: mint.address, owner: payer.address, tokenProgram: TOKEN_2022 });
  const [ownerAta] = await findAssociatedTokenPda({ mint: mint.address, owner: owner.address, tokenProgram: TOKEN_2022 });
  await send([
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, mint: mint.address, owner: payer.address, tokenProgram: TOKEN_2022 }),
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer, mint: mint.address, owner: owner.address, tokenProgram: TOKEN_2022 }),
    getMintToInstruction({ mint: mint.address, token: payerAta, mintAuthority: payer, amount: 50_000n }, { programAddress: TOKEN_2022 }),
    getTransferCheckedInstruction({ source: payerAta, mint: mint.address, destination: ownerAta, authority: payer, amount: 10_000n, decimals: 2 },
      { programAddress: TOKEN_2022 }),
  ]);
  const { value: acct } = await rpc.getAccountInfo(ownerAta, { commitment: 'confirmed', encoding: 'jsonParsed' }).send();
  assert.equal(acct.owner, TOKEN_2022);
  const info = acct.data.parsed.info;
  assert.equal(info.tokenAmount.amount, '9900', 'the destination receives the amount less the fee (1%), which it withholds');
  const exts = Object.fromEntries(info.extensions.map((e) => [e.extension, e.state]));
  assert.deepEqual(Object.keys(exts).sort(), ['immutableOwner', 'transferFeeAmount']);
  assert.equal(exts.transferFeeAmount.withheldAmount, 100n); // kit reads JSON numbers as bigint

  const { value: m } = await rpc.getAccountInfo(mint.address, { commitment: 'confirmed', encoding: 'jsonParsed' }).send();
  const mexts = Object.fromEntries(m.data.parsed.info.extensions.map((e) => [e.extension, e.state]));
  assert.deepEqual(Object.keys(mexts).sort(), ['mintCloseAuthority', 'transferFeeConfig']);
  assert.equal(mexts.mintCloseAuthority.closeAuthority, payer.address);
  assert.equal(mexts.transferFeeConfig.withdrawWithheldAuthority, payer.address);
  const { value: supply } = await rpc.getTokenSupply(mint.address, { commitment: 'confirmed' }).send();
  assert.equal(supply.amount, '50000');
});
