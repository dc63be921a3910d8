// Token-2022 extension instructions, the TokenMetadata and TokenGroup
// interfaces, and the extension sizes a mint or account needs, byte for
// byte as Token-2022 defines them.

import { createHash } from 'node:crypto';

import { SYSTEM, TOKEN22, r, ro, rs, w, ws } from './programs.mjs';
import { u16le, u32le, u64le, unb58 } from './wire.mjs';

/** EXT are the extension types (ExtensionType, u16). */
export const EXT = {
  TransferFeeConfig: 1, TransferFeeAmount: 2, MintCloseAuthority: 3, DefaultAccountState: 6, ImmutableOwner: 7,
  MemoTransfer: 8, NonTransferable: 9, InterestBearingConfig: 10, CpiGuard: 11, PermanentDelegate: 12,
  NonTransferableAccount: 13, TransferHook: 14, TransferHookAccount: 15, MetadataPointer: 18, TokenMetadata: 19,
  GroupPointer: 20, TokenGroup: 21, GroupMemberPointer: 22, TokenGroupMember: 23, ScaledUiAmount: 25, Pausable: 26,
  PausableAccount: 27,
};

/** SIZE is each fixed-size extension's value length. */
export const SIZE = {
  1: 108, 2: 8, 3: 32, 6: 1, 7: 0, 8: 1, 9: 0, 10: 52, 11: 1, 12: 32, 13: 0, 14: 64, 15: 1, 18: 64, 20: 64, 21: 80,
  22: 64, 23: 72, 25: 56, 26: 33, 27: 0,
};

/** ACCOUNT_EXTS are the account extensions a mint extension makes InitializeAccount add. */
export const ACCOUNT_EXTS = { 1: [2], 9: [13, 7], 14: [15], 26: [27] };

/** mintSize is the size of a mint with the given extensions (82 without). */
export function mintSize(exts) {
  if (!exts.length) return 82;
  return 166 + exts.reduce((n, t) => n + 4 + SIZE[t], 0);
}

/** accountSize is the size of a token account with the given extensions. */
export function accountSize(exts) {
  if (!exts.length) return 165;
  return 166 + exts.reduce((n, t) => n + 4 + SIZE[t], 0);
}

/** accountExtsFor lists the account extensions a mint's extensions require. */
export function accountExtsFor(mintExts) {
  const out = [];
  for (const t of mintExts) for (const a of ACCOUNT_EXTS[t] ?? []) if (!out.includes(a)) out.push(a);
  return out;
}

const ix = (name, keys, data) => ({ programId: TOKEN22, name, keys, data: Uint8Array.from(data) });
const key = (k) => [...unb58(k)];
const zero = () => new Array(32).fill(0);
const nz = (k) => (k ? key(k) : zero()); // OptionalNonZeroPubkey: 32 bytes, zero for none
const copt = (k) => (k ? [1, ...key(k)] : [0]); // instruction COption: 1-byte tag
const f64 = (v) => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return [...b];
};
const i16 = (v) => {
  const b = Buffer.alloc(2);
  b.writeInt16LE(v);
  return [...b];
};
const i64 = (v) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(BigInt(v));
  return [...b];
};
const str = (s) => {
  const b = [...Buffer.from(s)];
  return [...u32le(b.length), ...b];
};
const disc = (s) => [...createHash('sha256').update(s).digest().subarray(0, 8)];
const auth = (authority, signs, signers) =>
  signers && signers.length ? [r(authority), ...signers.map((s) => rs(s))] : [ro(authority, signs)];

/** ext builds the extension instructions. */
export const ext = {
  initMintCloseAuthority: (mint, authority) => ix('t22.initializeMintCloseAuthority', [w(mint)], [25, ...copt(authority)]),
  initTransferFee: (mint, configAuth, withdrawAuth, bps, maxFee) =>
    ix('t22.initializeTransferFeeConfig', [w(mint)], [26, 0, ...copt(configAuth), ...copt(withdrawAuth), ...u16le(bps), ...u64le(maxFee)]),
  transferCheckedWithFee: (src, mint, dst, authority, amount, decimals, fee, signs = true, signers) =>
    ix('t22.transferCheckedWithFee', [w(src), r(mint), w(dst), ...auth(authority, signs, signers)],
      [26, 1, ...u64le(amount), decimals, ...u64le(fee)]),
  withdrawWithheldFromMint: (mint, dst, authority, signs = true, signers) =>
    ix('t22.withdrawWithheldTokensFromMint', [w(mint), w(dst), ...auth(authority, signs, signers)], [26, 2]),
  withdrawWithheldFromAccounts: (mint, dst, authority, sources, signs = true, signers) =>
    ix('t22.withdrawWithheldTokensFromAccounts', [r(mint), w(dst), ...auth(authority, signs, signers), ...sources.map(w)],
      [26, 3, sources.length]),
  harvestToMint: (mint, sources) => ix('t22.harvestWithheldTokensToMint', [w(mint), ...sources.map(w)], [26, 4]),
  setTransferFee: (mint, authority, bps, maxFee, signs = true, signers) =>
    ix('t22.setTransferFee', [w(mint), ...auth(authority, signs, signers)], [26, 5, ...u16le(bps), ...u64le(maxFee)]),
  initDefaultState: (mint, state) => ix('t22.initializeDefaultAccountState', [w(mint)], [28, 0, state]),
  updateDefaultState: (mint, freezeAuth, state, signs = true, signers) =>
    ix('t22.updateDefaultAccountState', [w(mint), ...auth(freezeAuth, signs, signers)], [28, 1, state]),
  reallocate: (acct, payer, owner, types, signs = true, signers) =>
    ix('t22.reallocate', [w(acct), ws(payer), r(SYSTEM), ...auth(owner, signs, signers)], [29, ...types.flatMap((t) => u16le(t))]),
  memoTransfer: (acct, owner, enable, signs = true, signers) =>
    ix(enable ? 't22.enableRequiredMemoTransfers' : 't22.disableRequiredMemoTransfers', [w(acct), ...auth(owner, signs, signers)],
      [30, enable ? 0 : 1]),
  initNonTransferable: (mint) => ix('t22.initializeNonTransferableMint', [w(mint)], [32]),
  initInterestBearing: (mint, rateAuth, rate) =>
    ix('t22.initializeInterestBearingMint', [w(mint)], [33, 0, ...nz(rateAuth), ...i16(rate)]),
  updateRate: (mint, rateAuth, rate, signs = true, signers) =>
    ix('t22.updateInterestRate', [w(mint), ...auth(rateAuth, signs, signers)], [33, 1, ...i16(rate)]),
  cpiGuard: (acct, owner, enable, signs = true, signers) =>
    ix(enable ? 't22.enableCpiGuard' : 't22.disableCpiGuard', [w(acct), ...auth(owner, signs, signers)], [34, enable ? 0 : 1]),
  initPermanentDelegate: (mint, delegate) => ix('t22.initializePermanentDelegate', [w(mint)], [35, ...key(delegate)]),
  initTransferHook: (mint, authority, program) =>
    ix('t22.initializeTransferHook', [w(mint)], [36, 0, ...nz(authority), ...nz(program)]),
  updateTransferHook: (mint, authority, program, signs = true, signers) =>
    ix('t22.updateTransferHook', [w(mint), ...auth(authority, signs, signers)], [36, 1, ...nz(program)]),
  withdrawExcessLamports: (src, dst, authority, signs = true, signers) =>
    ix('t22.withdrawExcessLamports', [w(src), w(dst), ...auth(authority, signs, signers)], [38]),
  initPointer: (kind, mint, authority, address) =>
    ix(`t22.initialize${kind}`, [w(mint)], [POINTER_OP[kind], 0, ...nz(authority), ...nz(address)]),
  updatePointer: (kind, mint, authority, address, signs = true, signers) =>
    ix(`t22.update${kind}`, [w(mint), ...auth(authority, signs, signers)], [POINTER_OP[kind], 1, ...nz(address)]),
  initScaledUi: (mint, authority, multiplier) =>
    ix('t22.initializeScaledUiAmount', [w(mint)], [43, 0, ...nz(authority), ...f64(multiplier)]),
  updateMultiplier: (mint, authority, multiplier, effective, signs = true, signers) =>
    ix('t22.updateMultiplier', [w(mint), ...auth(authority, signs, signers)], [43, 1, ...f64(multiplier), ...i64(effective)]),
  initPausable: (mint, authority) => ix('t22.initializePausable', [w(mint)], [44, 0, ...key(authority)]),
  pause: (mint, authority, paused, signs = true, signers) =>
    ix(paused ? 't22.pause' : 't22.resume', [w(mint), ...auth(authority, signs, signers)], [44, paused ? 1 : 2]),

  // spl-token-metadata-interface
  metadataInit: (metadata, updateAuth, mint, mintAuth, name, symbol, uri, mintAuthSigns = true) =>
    ix('t22.metadata.initialize', [w(metadata), r(updateAuth), r(mint), ro(mintAuth, mintAuthSigns)],
      [...disc('spl_token_metadata_interface:initialize_account'), ...str(name), ...str(symbol), ...str(uri)]),
  metadataUpdateField: (metadata, updateAuth, field, value, signs = true) =>
    ix('t22.metadata.updateField', [w(metadata), ro(updateAuth, signs)],
      [...disc('spl_token_metadata_interface:updating_field'), ...(typeof field === 'number' ? [field] : [3, ...str(field)]), ...str(value)]),
  metadataRemoveKey: (metadata, updateAuth, k, idempotent, signs = true) =>
    ix('t22.metadata.removeKey', [w(metadata), ro(updateAuth, signs)],
      [...disc('spl_token_metadata_interface:remove_key_ix'), idempotent ? 1 : 0, ...str(k)]),
  metadataUpdateAuthority: (metadata, updateAuth, next, signs = true) =>
    ix('t22.metadata.updateAuthority', [w(metadata), ro(updateAuth, signs)],
      [...disc('spl_token_metadata_interface:update_the_authority'), ...nz(next)]),
  metadataEmit: (metadata, start, end) =>
    ix('t22.metadata.emit', [r(metadata)], [...disc('spl_token_metadata_interface:emitter'),
      ...(start === null ? [0] : [1, ...u64le(start)]), ...(end === null ? [0] : [1, ...u64le(end)])]),

  // spl-token-group-interface
  groupInit: (group, mint, mintAuth, updateAuth, maxSize, mintAuthSigns = true) =>
    ix('t22.group.initialize', [w(group), r(mint), ro(mintAuth, mintAuthSigns)],
      [...disc('spl_token_group_interface:initialize_token_group'), ...nz(updateAuth), ...u64le(maxSize)]),
  groupUpdateMaxSize: (group, updateAuth, maxSize, signs = true) =>
    ix('t22.group.updateMaxSize', [w(group), ro(updateAuth, signs)],
      [...disc('spl_token_group_interface:update_group_max_size'), ...u64le(maxSize)]),
  groupUpdateAuthority: (group, updateAuth, next, signs = true) =>
    ix('t22.group.updateAuthority', [w(group), ro(updateAuth, signs)],
      [...disc('spl_token_group_interface:update_authority'), ...nz(next)]),
  groupInitMember: (member, memberMint, memberMintAuth, group, groupUpdateAuth, signs = true) =>
    ix('t22.group.initializeMember', [w(member), r(memberMint), ro(memberMintAuth, signs), w(group), ro(groupUpdateAuth, signs)],
      [...disc('spl_token_group_interface:initialize_member')]),
};

const POINTER_OP = { MetadataPointer: 39, GroupPointer: 40, GroupMemberPointer: 41 };

/** metadataSize is the TLV value length of a TokenMetadata entry. */
export function metadataSize(name, symbol, uri, extra = []) {
  const s = (x) => 4 + Buffer.byteLength(x);
  return 64 + s(name) + s(symbol) + s(uri) + 4 + extra.reduce((n, [k, v]) => n + s(k) + s(v), 0);
}

/** extensions parses a Token-2022 account's TLV area: [{type, value}] (empty for base-size accounts). */
export function extensions(data) {
  const out = [];
  if (!data || data.length <= 165) return out;
  for (let off = 166; off + 4 <= data.length;) {
    const type = data.readUInt16LE(off);
    const len = data.readUInt16LE(off + 2);
    if (type === 0) break;
    out.push({ type, value: data.subarray(off + 4, off + 4 + len) });
    off += 4 + len;
  }
  return out;
}

/** extValue returns one extension's value, or null. */
export function extValue(data, type) {
  return extensions(data).find((e) => e.type === type)?.value ?? null;
}
