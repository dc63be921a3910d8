// Instruction encoders for the programs under test, byte for byte as the
// programs' interfaces define them. Each returns {programId, keys, data,
// name}; keys are {pubkey, isSigner, isWritable}.

import { PublicKey } from '@solana/web3.js';

import { u16le, u32le, u64le, unb58 } from './wire.mjs';

export const SYSTEM = '11111111111111111111111111111111';
export const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN22 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ATA = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const MEMO = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
export const MEMO1 = 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo';
export const ALT = 'AddressLookupTab1e1111111111111111111111111';
export const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
export const RENT = 'SysvarRent111111111111111111111111111111111';
export const CLOCK = 'SysvarC1ock11111111111111111111111111111111';
export const RECENT_BLOCKHASHES = 'SysvarRecentB1ockHashes11111111111111111111';
export const SLOT_HASHES = 'SysvarS1otHashes111111111111111111111111111';
export const NATIVE_MINT = 'So11111111111111111111111111111111111111112';
export const NATIVE_MINT_2022 = '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP';
export const INCINERATOR = '1nc1nerator11111111111111111111111111111111';

export const w = (pubkey) => ({ pubkey, isSigner: false, isWritable: true });
export const r = (pubkey) => ({ pubkey, isSigner: false, isWritable: false });
export const ws = (pubkey) => ({ pubkey, isSigner: true, isWritable: true });
export const rs = (pubkey) => ({ pubkey, isSigner: true, isWritable: false });
/** sig marks a key as signing (s) or not, read-only. */
export const ro = (pubkey, s) => ({ pubkey, isSigner: !!s, isWritable: false });

const ix = (programId, name, keys, data) => ({ programId, name, keys, data: Uint8Array.from(data) });
const key = (k) => [...unb58(k)];
const optKey1 = (k) => (k ? [1, ...key(k)] : [0]); // instruction COption: 1-byte tag
const str = (s) => {
  const b = [...Buffer.from(s)];
  return [...u64le(b.length), ...b];
};

export function pda(seeds, program) {
  const [k, bump] = PublicKey.findProgramAddressSync(seeds.map((s) => Buffer.from(s)), new PublicKey(program));
  return { key: k.toBase58(), bump };
}

export function createWithSeed(base, seed, owner) {
  return PublicKey.createWithSeed(new PublicKey(base), seed, new PublicKey(owner)).then((k) => k.toBase58());
}

export function ataAddress(wallet, mint, tokenProgram) {
  return pda([unb58(wallet), unb58(tokenProgram), unb58(mint)], ATA).key;
}

// ---- System

export const system = {
  createAccount: (from, to, lamports, space, owner) =>
    ix(SYSTEM, 'system.createAccount', [ws(from), ws(to)], [...u32le(0), ...u64le(lamports), ...u64le(space), ...key(owner)]),
  assign: (acct, owner) => ix(SYSTEM, 'system.assign', [ws(acct)], [...u32le(1), ...key(owner)]),
  transfer: (from, to, lamports, fromSigns = true) =>
    ix(SYSTEM, 'system.transfer', [{ pubkey: from, isSigner: fromSigns, isWritable: true }, w(to)], [...u32le(2), ...u64le(lamports)]),
  createAccountWithSeed: (from, to, base, seed, lamports, space, owner) =>
    ix(SYSTEM, 'system.createAccountWithSeed', base === from ? [ws(from), w(to)] : [ws(from), w(to), rs(base)],
      [...u32le(3), ...key(base), ...str(seed), ...u64le(lamports), ...u64le(space), ...key(owner)]),
  advanceNonce: (nonce, authority, authSigns = true) =>
    ix(SYSTEM, 'system.advanceNonceAccount', [w(nonce), r(RECENT_BLOCKHASHES), ro(authority, authSigns)], [...u32le(4)]),
  withdrawNonce: (nonce, to, authority, lamports, authSigns = true) =>
    ix(SYSTEM, 'system.withdrawNonceAccount', [w(nonce), w(to), r(RECENT_BLOCKHASHES), r(RENT), ro(authority, authSigns)],
      [...u32le(5), ...u64le(lamports)]),
  initializeNonce: (nonce, authority) =>
    ix(SYSTEM, 'system.initializeNonceAccount', [w(nonce), r(RECENT_BLOCKHASHES), r(RENT)], [...u32le(6), ...key(authority)]),
  authorizeNonce: (nonce, authority, newAuthority, authSigns = true) =>
    ix(SYSTEM, 'system.authorizeNonceAccount', [w(nonce), ro(authority, authSigns)], [...u32le(7), ...key(newAuthority)]),
  allocate: (acct, space) => ix(SYSTEM, 'system.allocate', [ws(acct)], [...u32le(8), ...u64le(space)]),
  allocateWithSeed: (acct, base, seed, space, owner) =>
    ix(SYSTEM, 'system.allocateWithSeed', [w(acct), rs(base)], [...u32le(9), ...key(base), ...str(seed), ...u64le(space), ...key(owner)]),
  assignWithSeed: (acct, base, seed, owner) =>
    ix(SYSTEM, 'system.assignWithSeed', [w(acct), rs(base)], [...u32le(10), ...key(base), ...str(seed), ...key(owner)]),
  transferWithSeed: (from, base, to, lamports, seed, owner) =>
    ix(SYSTEM, 'system.transferWithSeed', [w(from), rs(base), w(to)], [...u32le(11), ...u64le(lamports), ...str(seed), ...key(owner)]),
  upgradeNonce: (nonce) => ix(SYSTEM, 'system.upgradeNonceAccount', [w(nonce)], [...u32le(12)]),
};

// ---- Compute Budget

export const computeBudget = {
  heapFrame: (bytes) => ix(COMPUTE_BUDGET, 'computeBudget.requestHeapFrame', [], [1, ...u32le(bytes)]),
  limit: (units) => ix(COMPUTE_BUDGET, 'computeBudget.setComputeUnitLimit', [], [2, ...u32le(units)]),
  price: (microLamports) => ix(COMPUTE_BUDGET, 'computeBudget.setComputeUnitPrice', [], [3, ...u64le(microLamports)]),
  loadedData: (bytes) => ix(COMPUTE_BUDGET, 'computeBudget.setLoadedAccountsDataSizeLimit', [], [4, ...u32le(bytes)]),
};

// ---- SPL Token and Token-2022 (core). `signers` are multisig signer keys.

const auth = (authority, signs, signers) =>
  signers && signers.length ? [r(authority), ...signers.map((s) => rs(s))] : [ro(authority, signs)];

export const token = {
  initializeMint: (p, mint, decimals, mintAuth, freeze, rentKey = RENT) =>
    ix(p, 'token.initializeMint', [w(mint), r(rentKey)], [0, decimals, ...key(mintAuth), ...optKey1(freeze)]),
  initializeMint2: (p, mint, decimals, mintAuth, freeze) =>
    ix(p, 'token.initializeMint2', [w(mint)], [20, decimals, ...key(mintAuth), ...optKey1(freeze)]),
  initializeAccount: (p, acct, mint, owner, rentKey = RENT) =>
    ix(p, 'token.initializeAccount', [w(acct), r(mint), r(owner), r(rentKey)], [1]),
  initializeAccount2: (p, acct, mint, owner, rentKey = RENT) =>
    ix(p, 'token.initializeAccount2', [w(acct), r(mint), r(rentKey)], [16, ...key(owner)]),
  initializeAccount3: (p, acct, mint, owner) => ix(p, 'token.initializeAccount3', [w(acct), r(mint)], [18, ...key(owner)]),
  initializeMultisig: (p, ms, m, signers) =>
    ix(p, 'token.initializeMultisig', [w(ms), r(RENT), ...signers.map(r)], [2, m]),
  initializeMultisig2: (p, ms, m, signers) => ix(p, 'token.initializeMultisig2', [w(ms), ...signers.map(r)], [19, m]),
  transfer: (p, src, dst, authority, amount, signs = true, signers) =>
    ix(p, 'token.transfer', [w(src), w(dst), ...auth(authority, signs, signers)], [3, ...u64le(amount)]),
  transferChecked: (p, src, mint, dst, authority, amount, decimals, signs = true, signers, extra = []) =>
    ix(p, 'token.transferChecked', [w(src), r(mint), w(dst), ...auth(authority, signs, signers), ...extra],
      [12, ...u64le(amount), decimals]),
  approve: (p, src, delegate, owner, amount, signs = true, signers) =>
    ix(p, 'token.approve', [w(src), r(delegate), ...auth(owner, signs, signers)], [4, ...u64le(amount)]),
  approveChecked: (p, src, mint, delegate, owner, amount, decimals, signs = true, signers) =>
    ix(p, 'token.approveChecked', [w(src), r(mint), r(delegate), ...auth(owner, signs, signers)], [13, ...u64le(amount), decimals]),
  revoke: (p, src, owner, signs = true, signers) => ix(p, 'token.revoke', [w(src), ...auth(owner, signs, signers)], [5]),
  setAuthority: (p, target, current, kind, next, signs = true, signers) =>
    ix(p, 'token.setAuthority', [w(target), ...auth(current, signs, signers)], [6, kind, ...optKey1(next)]),
  mintTo: (p, mint, dst, authority, amount, signs = true, signers) =>
    ix(p, 'token.mintTo', [w(mint), w(dst), ...auth(authority, signs, signers)], [7, ...u64le(amount)]),
  mintToChecked: (p, mint, dst, authority, amount, decimals, signs = true, signers) =>
    ix(p, 'token.mintToChecked', [w(mint), w(dst), ...auth(authority, signs, signers)], [14, ...u64le(amount), decimals]),
  burn: (p, acct, mint, authority, amount, signs = true, signers) =>
    ix(p, 'token.burn', [w(acct), w(mint), ...auth(authority, signs, signers)], [8, ...u64le(amount)]),
  burnChecked: (p, acct, mint, authority, amount, decimals, signs = true, signers) =>
    ix(p, 'token.burnChecked', [w(acct), w(mint), ...auth(authority, signs, signers)], [15, ...u64le(amount), decimals]),
  closeAccount: (p, acct, dst, owner, signs = true, signers) =>
    ix(p, 'token.closeAccount', [w(acct), w(dst), ...auth(owner, signs, signers)], [9]),
  freeze: (p, acct, mint, authority, signs = true, signers) =>
    ix(p, 'token.freezeAccount', [w(acct), r(mint), ...auth(authority, signs, signers)], [10]),
  thaw: (p, acct, mint, authority, signs = true, signers) =>
    ix(p, 'token.thawAccount', [w(acct), r(mint), ...auth(authority, signs, signers)], [11]),
  syncNative: (p, acct, extra = []) => ix(p, 'token.syncNative', [w(acct), ...extra], [17]),
  getAccountDataSize: (p, mint, exts = []) =>
    ix(p, 'token.getAccountDataSize', [r(mint)], [21, ...exts.flatMap((e) => u16le(e))]),
  initializeImmutableOwner: (p, acct) => ix(p, 'token.initializeImmutableOwner', [w(acct)], [22]),
  amountToUiAmount: (p, mint, amount) => ix(p, 'token.amountToUiAmount', [r(mint)], [23, ...u64le(amount)]),
  uiAmountToAmount: (p, mint, ui) => ix(p, 'token.uiAmountToAmount', [r(mint)], [24, ...Buffer.from(ui)]),
  raw: (p, keys, data) => ix(p, 'token.raw', keys, data),
};

// ---- Associated Token Account

export const ata = {
  create: (payer, wallet, mint, tokenProgram, idempotent = false, address = ataAddress(wallet, mint, tokenProgram)) =>
    ix(ATA, idempotent ? 'ata.createIdempotent' : 'ata.create',
      [ws(payer), w(address), r(wallet), r(mint), r(SYSTEM), r(tokenProgram)], idempotent ? [1] : [0]),
  recoverNested: (wallet, ownerMint, nestedMint, tokenProgram, walletSigns = true) => {
    const ownerAta = ataAddress(wallet, ownerMint, tokenProgram);
    const nested = ataAddress(ownerAta, nestedMint, tokenProgram);
    const dest = ataAddress(wallet, nestedMint, tokenProgram);
    return ix(ATA, 'ata.recoverNested', [w(nested), r(nestedMint), w(dest), r(ownerAta), r(ownerMint),
      { pubkey: wallet, isSigner: walletSigns, isWritable: true }, r(tokenProgram)], [2]);
  },
};

// ---- Memo

export const memo = {
  v2: (bytes, signers = []) => ix(MEMO, 'memo.v2', signers.map(([k, s]) => ro(k, s)), [...bytes]),
  v1: (bytes, signers = []) => ix(MEMO1, 'memo.v1', signers.map(([k, s]) => ro(k, s)), [...bytes]),
};

// ---- Address Lookup Table

export const alt = {
  address: (authority, recentSlot) => pda([unb58(authority), Buffer.from(u64le(recentSlot))], ALT),
  create: (table, authority, payer, recentSlot, bump, authSigns = false) =>
    ix(ALT, 'alt.create', [w(table), ro(authority, authSigns), ws(payer), r(SYSTEM)], [...u32le(0), ...u64le(recentSlot), bump]),
  freeze: (table, authority, signs = true) => ix(ALT, 'alt.freeze', [w(table), ro(authority, signs)], [...u32le(1)]),
  extend: (table, authority, payer, addresses, signs = true) =>
    ix(ALT, 'alt.extend', payer ? [w(table), ro(authority, signs), ws(payer), r(SYSTEM)] : [w(table), ro(authority, signs)],
      [...u32le(2), ...u64le(addresses.length), ...addresses.flatMap(key)]),
  deactivate: (table, authority, signs = true) => ix(ALT, 'alt.deactivate', [w(table), ro(authority, signs)], [...u32le(3)]),
  close: (table, authority, recipient, signs = true) =>
    ix(ALT, 'alt.close', [w(table), ro(authority, signs), w(recipient)], [...u32le(4)]),
};

/** describe renders an instruction for a reproduction. */
export function describe(i) {
  const flags = (k) => (k.isSigner ? 's' : '-') + (k.isWritable ? 'w' : '-');
  return `${i.name ?? ""}@${i.programId.slice(0, 6)} data=${Buffer.from(i.data).toString('hex')} accounts=[${i.keys.map((k) => `${k.pubkey}(${flags(k)})`).join(', ')}]`;
}
