// LiteSVM side: the real compiled programs (p-token, Token-2022, ATA,
// Memo, the Address Lookup Table program) on an Agave runtime. Errors are
// turned into Agave's JSON shape (what ferry's RPC answers), and the
// blockhash, clock and slot hashes are set to ferry's so the very same
// signed bytes are valid, and mean the same, on both sides.

import { LiteSvm, Clock, Account } from 'litesvm/dist/internal.js';

import { b58, unb58 } from './wire.mjs';

// Variant names in the order of LiteSVM's enums (internal.d.ts).
const INSTRUCTION_ERRORS = ['GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData',
  'AccountDataTooSmall', 'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature',
  'AccountAlreadyInitialized', 'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId',
  'ExternalAccountLamportSpend', 'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified',
  'DuplicateAccountIndex', 'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged',
  'AccountNotExecutable', 'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'InvalidError',
  'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId',
  'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc',
  'ComputationalBudgetExceeded', 'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete',
  'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner',
  'ArithmeticOverflow', 'UnsupportedSysvar', 'IllegalOwner', 'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError'];
const TRANSACTION_ERRORS = ['AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound',
  'InsufficientFundsForFee', 'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep',
  'MissingSignatureForFee', 'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure',
  'ClusterMaintenance', 'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion',
  'InvalidWritableAccount', 'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled'];

/** agaveError turns a LiteSVM error object into Agave's JSON shape. */
export function agaveError(e) {
  if (typeof e === 'number') return TRANSACTION_ERRORS[e] ?? `TransactionError(${e})`;
  const name = e.constructor?.name ?? '';
  if (name.endsWith('InstructionError')) {
    const inner = e.err();
    let ie;
    if (typeof inner === 'number') ie = INSTRUCTION_ERRORS[inner] ?? `InstructionError(${inner})`;
    else if ('code' in inner) ie = { Custom: inner.code };
    else ie = { BorshIoError: inner.msg };
    return { InstructionError: [e.index, ie] };
  }
  if (name.endsWith('DuplicateInstruction')) return { DuplicateInstruction: e.index };
  if (name.endsWith('InsufficientFundsForRent')) return { InsufficientFundsForRent: { account_index: e.accountIndex } };
  if (name.endsWith('ProgramExecutionTemporarilyRestricted')) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } };
  }
  return `unknown(${String(e)})`;
}

/** Svm wraps one LiteSVM instance. */
export class Svm {
  constructor() {
    this.inner = new LiteSvm();
  }

  /**
   * setBlockhash makes hash (base58) LiteSVM's latest blockhash. LiteSVM
   * has no setter, so its snapshot is rewritten: every copy of the current
   * blockhash becomes the new one.
   */
  setBlockhash(hash) {
    const cur = Buffer.from(unb58(this.inner.latestBlockhash()));
    const next = Buffer.from(unb58(hash));
    if (cur.equals(next)) return;
    const snap = Buffer.from(this.inner.toBytes());
    let n = 0;
    for (let i = snap.indexOf(cur); i >= 0; i = snap.indexOf(cur, i + 1)) {
      next.copy(snap, i);
      n++;
    }
    if (n === 0) throw new Error('LiteSVM snapshot does not hold its blockhash');
    this.inner = LiteSvm.fromBytes(snap);
    // A restored snapshot does not bring back the programs' loaded code
    // for every loader; load the default programs again.
    this.inner.setDefaultPrograms();
    if (this.inner.latestBlockhash() !== hash) throw new Error('LiteSVM blockhash rewrite failed');
  }

  /** setClock copies ferry's Clock sysvar (its 40 data bytes). */
  setClock(data) {
    const b = Buffer.from(data);
    this.inner.setClock(new Clock(b.readBigUInt64LE(0), b.readBigInt64LE(8), b.readBigUInt64LE(16),
      b.readBigUInt64LE(24), b.readBigInt64LE(32)));
  }

  /** setSlotHashes copies ferry's SlotHashes sysvar (u64 count, (slot, hash)*). */
  setSlotHashes(data) {
    const b = Buffer.from(data);
    const n = Number(b.readBigUInt64LE(0));
    const out = [];
    for (let i = 0; i < n; i++) {
      const off = 8 + i * 40;
      out.push({ slot: b.readBigUInt64LE(off), hash: b58(b.subarray(off + 8, off + 40)) });
    }
    this.inner.setSlotHashes(out);
  }

  /** slot is the current slot (the Clock's). */
  slot() {
    return this.inner.getClock().slot;
  }

  /** epoch is the current epoch (the Clock's). */
  epoch() {
    return this.inner.getClock().epoch;
  }

  /** unixTimestamp is the Clock's time. */
  unixTimestamp() {
    return this.inner.getClock().unixTimestamp;
  }

  airdrop(key, lamports) {
    const r = this.inner.airdrop(unb58(key), BigInt(lamports));
    if (!r || typeof r.err === 'function') throw new Error(`LiteSVM airdrop to ${key} failed`);
  }

  /** get returns {lamports, owner, data, executable} or null (also for 0 lamports). */
  get(key) {
    const a = this.inner.getAccount(unb58(key));
    if (!a || a.lamports() === 0n) return null;
    return { lamports: a.lamports(), owner: b58(a.owner()), data: Buffer.from(a.data()), executable: a.executable() };
  }

  /** set writes an account (null deletes it). */
  set(key, a) {
    const acct = a
      ? new Account(BigInt(a.lamports), Uint8Array.from(a.data), unb58(a.owner), a.executable, 0n)
      : new Account(0n, new Uint8Array(0), new Uint8Array(32), false, 0n);
    this.inner.setAccount(unb58(key), acct);
  }

  /**
   * send executes a signed transaction. Returns {landed, err} where landed
   * says whether it was recorded (fee charged), err is null or Agave's JSON.
   */
  send(raw, signature, v0) {
    // A signature that already landed keeps its record: only a new one
    // means this send landed.
    const seen = this.inner.getTransaction(unb58(signature, 64)) !== null;
    const r = v0 ? this.inner.sendVersionedTransaction(raw) : this.inner.sendLegacyTransaction(raw);
    const failed = typeof r.err === 'function';
    const landed = !seen && this.inner.getTransaction(unb58(signature, 64)) !== null;
    const meta = failed ? r.meta() : r;
    const rd = meta.returnData();
    const returnData = rd && rd.data().length ? { programId: b58(rd.programId()), data: Buffer.from(rd.data()).toString('base64') } : null;
    return { landed, err: failed ? agaveError(r.err()) : null, logs: meta.logs(), returnData };
  }
}
