// The random transaction generator. It keeps a world of keys it holds and
// of the accounts it created (mints, token accounts, multisigs, nonce
// accounts, lookup tables) and reads their current state from LiteSVM
// (both sides hold the same state, or the run has already reported a
// divergence), then builds transactions that are mostly plausible and often
// wrong on purpose: edge amounts, wrong accounts, missing or wrong
// signers, the other token program, priority fees, v0 messages.

import { keypairFromSeed, sha256, u64le } from './wire.mjs';
import {
  ALT, ATA, INCINERATOR, MEMO, NATIVE_MINT, NATIVE_MINT_2022, RENT, SYSTEM, TOKEN, TOKEN22, CLOCK, RECENT_BLOCKHASHES,
  alt, ata, ataAddress, computeBudget, memo, r, system, token, w,
} from './programs.mjs';
import { accountExtsFor, accountSize, ext, EXT, extValue, metadataSize, mintSize, SIZE } from './token2022.mjs';

const MINT_SIZE = 82;
const ACCOUNT_SIZE = 165;
const MULTISIG_SIZE = 355;
const NONCE_SIZE = 80;
const U64_MAX = 2n ** 64n - 1n;

export function rentExempt(size) {
  return BigInt(128 + size) * 6960n;
}

/** decodeTokenAccount reads the 165-byte base of a token account. */
export function decodeTokenAccount(d) {
  if (!d || d.length < ACCOUNT_SIZE || d.length === MULTISIG_SIZE) return null;
  const opt = (off) => (d.readUInt32LE(off) === 1 ? d.subarray(off + 4, off + 36) : null);
  return {
    mint: d.subarray(0, 32), owner: d.subarray(32, 64), amount: d.readBigUInt64LE(64), delegate: opt(72),
    state: d[108], isNative: d.readUInt32LE(109) === 1 ? d.readBigUInt64LE(113) : null,
    delegatedAmount: d.readBigUInt64LE(121), closeAuthority: opt(129),
  };
}

/** decodeNonce reads a nonce account: {version, initialized, authority, nonce, lamportsPerSignature}. */
export function decodeNonce(d) {
  if (!d || d.length < 8) return null;
  const st = { version: d.readUInt32LE(0), initialized: d.readUInt32LE(4) === 1 };
  if (st.initialized && d.length >= NONCE_SIZE) {
    st.authority = b58(d.subarray(8, 40));
    st.nonce = b58(d.subarray(40, 72));
    st.lamportsPerSignature = d.readBigUInt64LE(72);
  }
  return st;
}

/** decodeTable reads a lookup table: {deactivationSlot, lastExtendedSlot, authority, addresses}. */
export function decodeTable(d) {
  if (!d || d.length < 56 || d.readUInt32LE(0) !== 1) return null;
  const addresses = [];
  for (let off = 56; off + 32 <= d.length; off += 32) addresses.push(b58(d.subarray(off, off + 32)));
  return {
    deactivationSlot: d.readBigUInt64LE(4), lastExtendedSlot: d.readBigUInt64LE(12), startIndex: d[20],
    authority: d[21] === 1 ? b58(d.subarray(22, 54)) : null, addresses,
  };
}

export function decodeMint(d) {
  if (!d || d.length < MINT_SIZE) return null;
  const opt = (off) => (d.readUInt32LE(off) === 1 ? d.subarray(off + 4, off + 36) : null);
  return { mintAuthority: opt(0), supply: d.readBigUInt64LE(36), decimals: d[44], initialized: d[45] === 1, freezeAuthority: opt(46) };
}

export class Generator {
  constructor(rng, svm, seed) {
    this.rng = rng;
    this.svm = svm;
    this.seed = seed;
    this.nextKey = 0;
    this.keys = new Map(); // pubkey -> keypair: everything this generator can sign for
    this.payers = [];
    this.wallets = [];
    this.mints = []; // {key, program, decimals}
    this.accounts = []; // token accounts {key, mint, program}
    this.multisigs = []; // {key, program, signers}
    this.nonces = []; // {key}
    this.tables = []; // {key, authority}
    this.plain = []; // system-owned or program-owned accounts created by system ops
    this.seeded = []; // {key, base, seed, owner}
  }

  /** keypair derives the next keypair of this seed. */
  keypair() {
    const kp = keypairFromSeed(sha256(Buffer.from(`ferry-differential/${this.seed}/${this.nextKey++}`)));
    this.keys.set(kp.publicKey, kp);
    return kp.publicKey;
  }

  acct(k) {
    return this.svm.get(k);
  }

  pick(arr) {
    return arr.length ? this.rng.pick(arr) : null;
  }

  /** anyKey picks a key the world knows, for wrong-account mutations. */
  anyKey() {
    const pools = [this.payers, this.wallets, this.mints.map((m) => m.key), this.accounts.map((a) => a.key),
      this.multisigs.map((m) => m.key), this.nonces.map((n) => n.key), this.tables.map((t) => t.key), this.plain,
      [SYSTEM, TOKEN, TOKEN22, RENT, NATIVE_MINT, NATIVE_MINT_2022, INCINERATOR, CLOCK]];
    const pool = this.rng.pick(pools.filter((p) => p.length));
    return this.rng.pick(pool);
  }

  /** maybe returns alt with probability p (a mutation), else k. */
  maybe(k, p = 0.08) {
    return this.rng.chance(p) ? this.anyKey() : k;
  }

  program() {
    return this.rng.chance(0.5) ? TOKEN : TOKEN22;
  }

  otherProgram(p) {
    return p === TOKEN ? TOKEN22 : TOKEN;
  }

  tokenState(k) {
    const a = this.acct(k);
    return a ? decodeTokenAccount(a.data) : null;
  }

  mintState(k) {
    const a = this.acct(k);
    return a ? decodeMint(a.data) : null;
  }

  /** authorityOf picks who signs for a token authority: usually right. */
  signerFor(authorityBytes) {
    if (!authorityBytes) return { key: this.pick(this.wallets), signs: true };
    const k = keyOf(authorityBytes);
    const ms = this.multisigs.find((m) => m.key === k);
    if (ms) {
      const n = this.rng.range(0, ms.signers.length);
      return { key: k, signs: false, signers: this.rng.chance(0.1) ? [this.pick(this.wallets)] : ms.signers.slice(0, n) };
    }
    if (this.rng.chance(0.06)) return { key: this.pick(this.wallets), signs: true };
    return { key: k, signs: !this.rng.chance(0.06) };
  }

  async setup() {
    for (let i = 0; i < 3; i++) this.payers.push(this.keypair());
    for (let i = 0; i < 6; i++) this.wallets.push(this.keypair());
  }

  /** next builds the next transaction. */
  next() {
    const ops = this.ops();
    for (;;) {
      const n = this.rng.chance(0.7) ? 1 : this.rng.range(2, 3);
      const parts = [];
      for (let i = 0; i < n * 3 && parts.length < n; i++) {
        const name = this.rng.weighted(ops);
        const part = this[name]();
        if (part) {
          part.op = name;
          parts.push(part);
        }
      }
      if (!parts.length) continue;
      return this.assemble(parts);
    }
  }

  ops() {
    const haveMints = this.mints.length > 0;
    const haveAccounts = this.accounts.length > 0;
    return {
      opNewMint: this.mints.length < 12 ? 6 : 1,
      opNewTokenAccount: haveMints ? (this.accounts.length < 30 ? 6 : 1) : 0,
      opNewAta: haveMints ? 5 : 0,
      opNewMultisig: this.multisigs.length < 4 ? 1 : 0.2,
      opWrapSol: 1,
      opMintTo: haveAccounts ? 8 : 0,
      opTransfer: haveAccounts ? 12 : 0,
      opApprove: haveAccounts ? 4 : 0,
      opRevoke: haveAccounts ? 3 : 0,
      opSetAuthority: haveAccounts || haveMints ? 4 : 0,
      opBurn: haveAccounts ? 4 : 0,
      opClose: haveAccounts ? 3 : 0,
      opFreeze: haveAccounts ? 3 : 0,
      opSyncNative: haveAccounts ? 2 : 0,
      opQuery: haveMints ? 3 : 0,
      opImmutableOwner: 1,
      opRecoverNested: haveAccounts ? 1 : 0,
      opSystemTransfer: 5,
      opSystemCreate: 3,
      opSystemSeed: 2,
      opMemo: 3,
      opNewNonce: this.nonces.length < 6 ? 2 : 0.3,
      opNonce: this.nonces.length ? 3 : 0,
      opNewTable: this.tables.length < 6 ? 2 : 0.3,
      opTable: this.tables.length ? 4 : 0,
      opNewExtMint: this.extMints().length < 10 ? 5 : 1,
      opExtMint: this.extMints().length ? 6 : 0,
      opExtAccount: this.accounts.some((a) => a.program === TOKEN22) ? 3 : 0,
      opGroupMember: this.extMints().length ? 1 : 0,
    };
  }

  extMints() {
    return this.mints.filter((m) => m.exts?.length);
  }

  /** assemble turns parts into a transaction, maybe with compute-budget instructions. */
  assemble(parts) {
    const payer = this.rng.pick(this.payers);
    const ixs = [];
    if (this.rng.chance(0.3)) {
      const cb = [];
      if (this.rng.chance(0.7)) cb.push(computeBudget.price(this.rng.pick([0, 1, 1000, 5000, this.rng.int(2_000_000), 1_000_000_000])));
      if (this.rng.chance(0.4)) cb.push(computeBudget.limit(this.rng.pick([400_000, 1_400_000, 2_000_000, this.rng.range(600_000, 1_400_000)])));
      if (this.rng.chance(0.05)) cb.push(computeBudget.heapFrame(this.rng.pick([32 * 1024, 64 * 1024, 256 * 1024, 1000, 512 * 1024])));
      if (this.rng.chance(0.05)) cb.push(computeBudget.loadedData(this.rng.pick([0, 64 * 1024 * 1024, 128 * 1024 * 1024])));
      if (this.rng.chance(0.03) && cb.length) cb.push(cb[0]);
      ixs.push(...cb);
    }
    for (const p of parts) ixs.push(...p.ixs);
    const tx = {
      payer, ixs, labels: parts.map((p) => p.op), version: 'legacy', tables: [],
      after: (ok) => { if (ok) for (const p of parts) p.after?.(); },
    };
    if (this.nonces.length && this.rng.chance(0.1)) this.useNonce(tx);
    if (this.tables.length && this.rng.chance(0.3)) this.useTables(tx);
    return tx;
  }

  /**
   * useNonce makes tx a durable-nonce transaction: its blockhash is a nonce
   * account's stored value and AdvanceNonceAccount comes first (mostly;
   * sometimes a stale value, a wrong authority or the advance in second
   * place, which make it an ordinary, too-old transaction).
   */
  useNonce(tx) {
    const n = this.pick(this.nonces);
    const st = decodeNonce(this.acct(n.key)?.data);
    if (!st?.initialized) return;
    const others = this.nonces.map((x) => decodeNonce(this.acct(x.key)?.data)?.nonce).filter(Boolean);
    tx.blockhash = this.rng.chance(0.92) ? st.nonce : this.rng.pick(others);
    const signer = this.rng.chance(0.92) ? st.authority : this.rng.pick(this.wallets);
    const adv = system.advanceNonce(n.key, signer, !this.rng.chance(0.03));
    if (this.rng.chance(0.04) && tx.ixs.length) tx.ixs.splice(1, 0, adv);
    else tx.ixs.unshift(adv);
    tx.nonce = n.key;
    tx.labels.unshift('nonceTx');
  }

  /**
   * useTables makes tx a v0 message loading what it can through lookup
   * tables (as the tables hold them now, including addresses added in this
   * slot, which are not usable yet), sometimes through a table that lists
   * an address it does not hold, or an account that is not a table.
   */
  useTables(tx) {
    tx.version = 'v0';
    tx.labels.push('v0');
    const n = this.rng.range(1, 2);
    for (let i = 0; i < n; i++) {
      const t = this.pick(this.tables);
      const st = decodeTable(this.acct(t.key)?.data);
      let addresses = st ? st.addresses.slice() : [];
      const used = tx.ixs.flatMap((x) => x.keys.map((k) => k.pubkey)).filter((k) => !addresses.includes(k));
      if (this.rng.chance(0.06) && used.length) addresses.push(this.rng.pick(used));
      if (!st && !addresses.length && used.length) addresses = [this.rng.pick(used)];
      let key = t.key;
      if (this.rng.chance(0.03)) {
        key = this.rng.chance(0.5) ? this.keypair() : this.anyKey();
        if (used.length) addresses = [this.rng.pick(used)];
      }
      if (!tx.tables.some((x) => x.key === key)) tx.tables.push({ key, addresses });
    }
  }

  // ---- token setup

  opNewMint() {
    const prog = this.program();
    const mint = this.keypair();
    const payer = this.rng.pick(this.payers);
    const decimals = this.rng.pick([0, 2, 6, 9, this.rng.int(256)]);
    const authority = this.rng.pick(this.wallets);
    const freeze = this.rng.chance(0.6) ? this.rng.pick(this.wallets) : null;
    const size = this.rng.chance(0.05) ? this.rng.pick([81, 83, ACCOUNT_SIZE, 0]) : MINT_SIZE;
    const lamports = this.rng.chance(0.05) ? rentExempt(size) - 1n : rentExempt(size);
    const owner = this.rng.chance(0.04) ? this.otherProgram(prog) : prog;
    const init = this.rng.chance(0.5)
      ? token.initializeMint2(prog, mint, decimals, authority, freeze)
      : token.initializeMint(prog, mint, decimals, authority, freeze, this.rng.chance(0.05) ? CLOCK : RENT);
    const ixs = [system.createAccount(payer, mint, lamports, size, owner), init];
    if (this.rng.chance(0.05)) ixs.push(init); // initialized twice
    return { ixs, after: () => this.mints.push({ key: mint, program: prog, decimals }) };
  }

  opNewTokenAccount() {
    const m = this.pick(this.mints);
    const prog = this.rng.chance(0.05) ? this.otherProgram(m.program) : m.program;
    const acct = this.keypair();
    const payer = this.rng.pick(this.payers);
    const owner = this.rng.chance(0.1) ? this.anyKey() : this.rng.pick(this.wallets);
    const need = prog === TOKEN22 && m.exts ? accountSize(accountExtsFor(m.exts)) : ACCOUNT_SIZE;
    const size = this.rng.chance(0.05) ? this.rng.pick([164, 166, MINT_SIZE, MULTISIG_SIZE]) : need;
    const lamports = this.rng.chance(0.05) ? rentExempt(size) - 1n : rentExempt(size) + (this.rng.chance(0.1) ? 777n : 0n);
    const mint = this.maybe(m.key, 0.05);
    let init;
    switch (this.rng.int(3)) {
      case 0: init = token.initializeAccount(prog, acct, mint, owner); break;
      case 1: init = token.initializeAccount2(prog, acct, mint, owner); break;
      default: init = token.initializeAccount3(prog, acct, mint, owner);
    }
    const ixs = [system.createAccount(payer, acct, lamports, size, this.rng.chance(0.03) ? SYSTEM : prog)];
    if (prog === TOKEN22 && this.rng.chance(0.2)) ixs.push(token.initializeImmutableOwner(prog, acct));
    ixs.push(init);
    if (this.rng.chance(0.03)) ixs.push(init);
    return { ixs, after: () => this.accounts.push({ key: acct, mint: m.key, program: prog }) };
  }

  opNewAta() {
    const m = this.rng.chance(0.1) ? { key: this.rng.pick([NATIVE_MINT, NATIVE_MINT_2022]) } : this.pick(this.mints);
    const prog = m.program ?? (m.key === NATIVE_MINT ? TOKEN : TOKEN22);
    const wallet = this.rng.chance(0.15) ? this.pick(this.accounts.map((a) => a.key)) ?? this.rng.pick(this.wallets) : this.rng.pick(this.wallets);
    const payer = this.rng.pick(this.payers);
    const tokenProgram = this.rng.chance(0.05) ? this.maybe(this.otherProgram(prog), 0.5) : prog;
    const address = this.rng.chance(0.04) ? this.anyKey() : ataAddress(wallet, m.key, tokenProgram);
    const ixs = [];
    if (this.rng.chance(0.05)) ixs.push(system.transfer(payer, address, this.rng.pick([1n, 890880n, 3_000_000n])));
    ixs.push(ata.create(payer, wallet, m.key, tokenProgram, this.rng.chance(0.5), address));
    return {
      ixs,
      after: () => {
        if (!this.accounts.some((a) => a.key === address)) this.accounts.push({ key: address, mint: m.key, program: prog, ata: true, wallet });
      },
    };
  }

  opNewMultisig() {
    const prog = this.program();
    const ms = this.keypair();
    const payer = this.rng.pick(this.payers);
    const n = this.rng.range(1, 4);
    const signers = [];
    for (let i = 0; i < n; i++) signers.push(this.rng.pick(this.wallets));
    const m = this.rng.chance(0.9) ? this.rng.range(1, n) : this.rng.pick([0, n + 1, 12]);
    const init = this.rng.chance(0.5) ? token.initializeMultisig(prog, ms, m, signers) : token.initializeMultisig2(prog, ms, m, signers);
    return {
      ixs: [system.createAccount(payer, ms, rentExempt(MULTISIG_SIZE), MULTISIG_SIZE, prog), init],
      after: () => this.multisigs.push({ key: ms, program: prog, signers, m }),
    };
  }

  opWrapSol() {
    const prog = this.program();
    const mint = prog === TOKEN ? NATIVE_MINT : NATIVE_MINT_2022;
    const wallet = this.rng.pick(this.payers.concat(this.wallets));
    const payer = this.rng.pick(this.payers);
    const address = ataAddress(wallet, mint, prog);
    const ixs = [ata.create(payer, wallet, mint, prog, true)];
    if (this.rng.chance(0.8)) ixs.push(system.transfer(payer, address, BigInt(this.rng.range(0, 5_000_000))));
    if (this.rng.chance(0.8)) ixs.push(token.syncNative(prog, address));
    return {
      ixs,
      after: () => {
        if (!this.accounts.some((a) => a.key === address)) this.accounts.push({ key: address, mint, program: prog, ata: true, wallet });
      },
    };
  }

  // ---- token actions

  /**
   * tokenAccount picks a token account with its decoded state, mostly one
   * holding tokens.
   */
  tokenAccount() {
    let a = this.pick(this.accounts);
    if (this.rng.chance(0.75)) {
      const funded = this.accounts.filter((x) => (this.tokenState(x.key)?.amount ?? 0n) > 0n);
      if (funded.length) a = this.pick(funded);
    }
    const st = a && this.tokenState(a.key);
    return st ? { ...a, st } : null;
  }

  opMintTo() {
    const a = this.tokenAccount();
    if (!a) return null;
    const m = this.mintState(a.mint);
    if (!m) return null;
    const s = this.signerFor(m.mintAuthority);
    const prog = this.rng.chance(0.04) ? this.otherProgram(a.program) : a.program;
    const amount = this.rng.chance(0.1) ? this.rng.amount(U64_MAX - m.supply) : BigInt(this.rng.int(10_000_000));
    const mint = this.maybe(a.mint, 0.05);
    const ix = this.rng.chance(0.5)
      ? token.mintTo(prog, mint, this.maybe(a.key, 0.03), s.key, amount, s.signs, s.signers)
      : token.mintToChecked(prog, mint, this.maybe(a.key, 0.03), s.key, amount, this.rng.chance(0.9) ? m.decimals : (m.decimals + 1) & 0xff, s.signs, s.signers);
    return { ixs: [ix] };
  }

  opTransfer() {
    const a = this.tokenAccount();
    if (!a) return null;
    const sameMint = this.accounts.filter((x) => x.mint === a.mint);
    const dst = this.rng.chance(0.9) ? this.rng.pick(sameMint) : this.rng.pick(this.accounts);
    let s;
    if (a.st.delegate && this.rng.chance(0.5)) s = this.signerFor(a.st.delegate);
    else s = this.signerFor(a.st.owner);
    const amount = this.rng.chance(0.7) ? this.rng.spend(a.st.amount) : this.rng.spend(a.st.delegatedAmount);
    const prog = this.rng.chance(0.03) ? this.otherProgram(a.program) : a.program;
    const m = this.mintState(a.mint);
    const decimals = m && this.rng.chance(0.92) ? m.decimals : this.rng.int(12);
    const ix = this.rng.chance(0.4)
      ? token.transfer(prog, this.maybe(a.key, 0.02), this.maybe(dst.key, 0.03), s.key, amount, s.signs, s.signers)
      : token.transferChecked(prog, this.maybe(a.key, 0.02), this.maybe(a.mint, 0.04), this.maybe(dst.key, 0.03), s.key, amount, decimals, s.signs, s.signers);
    return { ixs: [ix] };
  }

  opApprove() {
    const a = this.tokenAccount();
    if (!a) return null;
    const s = this.signerFor(a.st.owner);
    const delegate = this.rng.pick(this.wallets);
    const amount = this.rng.amount(a.st.amount);
    const m = this.mintState(a.mint);
    const ix = this.rng.chance(0.5)
      ? token.approve(a.program, a.key, delegate, s.key, amount, s.signs, s.signers)
      : token.approveChecked(a.program, a.key, this.maybe(a.mint, 0.05), delegate, s.key, amount,
        m && this.rng.chance(0.9) ? m.decimals : 3, s.signs, s.signers);
    return { ixs: [ix] };
  }

  opRevoke() {
    const a = this.tokenAccount();
    if (!a) return null;
    const s = a.st.delegate && this.rng.chance(0.4) ? this.signerFor(a.st.delegate) : this.signerFor(a.st.owner);
    return { ixs: [token.revoke(a.program, a.key, s.key, s.signs, s.signers)] };
  }

  opSetAuthority() {
    if (this.rng.chance(0.5) && this.mints.length) {
      const mk = this.pick(this.mints);
      const m = this.mintState(mk.key);
      if (!m) return null;
      const kind = this.rng.chance(0.9) ? this.rng.int(2) : this.rng.pick([2, 3, 4, 6, 9]);
      const cur = kind === 1 ? m.freezeAuthority : m.mintAuthority;
      const s = this.signerFor(cur);
      const next = this.rng.chance(0.15) ? null : this.rng.chance(0.2) ? this.pick(this.multisigs.map((x) => x.key)) ?? this.rng.pick(this.wallets) : this.rng.pick(this.wallets);
      return { ixs: [token.setAuthority(mk.program, mk.key, s.key, kind, next, s.signs, s.signers)] };
    }
    const a = this.tokenAccount();
    if (!a) return null;
    const kind = this.rng.chance(0.9) ? this.rng.pick([2, 3]) : this.rng.pick([0, 1, 5]);
    const cur = kind === 3 && a.st.closeAuthority ? a.st.closeAuthority : a.st.owner;
    const s = this.signerFor(cur);
    const next = this.rng.chance(0.2) ? null : this.rng.pick(this.wallets);
    return { ixs: [token.setAuthority(a.program, a.key, s.key, kind, next, s.signs, s.signers)] };
  }

  opBurn() {
    const a = this.tokenAccount();
    if (!a) return null;
    const s = a.st.delegate && this.rng.chance(0.4) ? this.signerFor(a.st.delegate) : this.signerFor(a.st.owner);
    const amount = this.rng.spend(a.st.amount);
    const m = this.mintState(a.mint);
    const ix = this.rng.chance(0.5)
      ? token.burn(a.program, a.key, this.maybe(a.mint, 0.05), s.key, amount, s.signs, s.signers)
      : token.burnChecked(a.program, a.key, this.maybe(a.mint, 0.05), s.key, amount, m && this.rng.chance(0.9) ? m.decimals : 1, s.signs, s.signers);
    return { ixs: [ix] };
  }

  opClose() {
    const a = this.tokenAccount();
    if (!a) return null;
    const ixs = [];
    const s = this.signerFor(a.st.closeAuthority ?? a.st.owner);
    if (a.st.amount > 0n && a.st.isNative === null && this.rng.chance(0.5)) {
      const o = this.signerFor(a.st.owner);
      ixs.push(token.burn(a.program, a.key, a.mint, o.key, a.st.amount, o.signs, o.signers));
    }
    const dst = this.rng.chance(0.1) ? this.rng.pick([a.key, INCINERATOR, a.mint]) : this.rng.pick(this.payers.concat(this.wallets));
    ixs.push(token.closeAccount(a.program, a.key, dst, s.key, s.signs, s.signers));
    return { ixs };
  }

  opFreeze() {
    const a = this.tokenAccount();
    if (!a) return null;
    const m = this.mintState(a.mint);
    const s = this.signerFor(m?.freezeAuthority ?? null);
    const freeze = this.rng.chance(0.5);
    const f = freeze ? token.freeze : token.thaw;
    return { ixs: [f(a.program, a.key, this.maybe(a.mint, 0.05), s.key, s.signs, s.signers)] };
  }

  opSyncNative() {
    const natives = this.accounts.filter((x) => x.mint === NATIVE_MINT || x.mint === NATIVE_MINT_2022);
    const pick = natives.length && this.rng.chance(0.85) ? this.pick(natives) : this.pick(this.accounts);
    const st = pick && this.tokenState(pick.key);
    if (!st) return null;
    const a = { ...pick, st };
    const ixs = [];
    if (this.rng.chance(0.5)) ixs.push(system.transfer(this.rng.pick(this.payers), a.key, BigInt(this.rng.int(3_000_000))));
    const extra = a.program === TOKEN22 && this.rng.chance(0.2) ? [r(this.rng.chance(0.8) ? RENT : CLOCK)] : [];
    ixs.push(token.syncNative(a.program, this.maybe(a.key, 0.05), extra));
    return { ixs };
  }

  opQuery() {
    const m = this.pick(this.mints);
    const prog = this.rng.chance(0.05) ? this.otherProgram(m.program) : m.program;
    const mint = this.maybe(m.key, 0.1);
    switch (this.rng.int(3)) {
      case 0: {
        const exts = this.rng.chance(0.5) ? [] : Array.from({ length: this.rng.range(1, 3) }, () => this.rng.pick([7, 7, 8, 11, 2, 15, 1, 30, 0]));
        return { ixs: [token.getAccountDataSize(prog, mint, exts)] };
      }
      case 1:
        return { ixs: [token.amountToUiAmount(prog, mint, this.rng.amount(10n ** 12n))] };
      default: {
        const ui = this.rng.pick(['1', '0', '0.5', '1.000001', '12345.6789', '', 'abc', '-1', '1e3', '18446744073709551616',
          '0.0000000001', '.5', '5.', ' 1', '1.2.3', String(this.rng.int(1e9)), '00001.10']);
        return { ixs: [token.uiAmountToAmount(prog, mint, ui)] };
      }
    }
  }

  opImmutableOwner() {
    const prog = this.program();
    const acct = this.keypair();
    const payer = this.rng.pick(this.payers);
    const size = this.rng.pick([ACCOUNT_SIZE, 170, 170, 171, 166]);
    const ixs = [system.createAccount(payer, acct, rentExempt(size), size, prog), token.initializeImmutableOwner(prog, acct)];
    if (this.rng.chance(0.5) && this.mints.length) {
      const m = this.pick(this.mints);
      ixs.push(token.initializeAccount3(prog, acct, m.key, this.rng.pick(this.wallets)));
      return { ixs, after: () => this.accounts.push({ key: acct, mint: m.key, program: prog }) };
    }
    return { ixs };
  }

  opRecoverNested() {
    const owners = this.accounts.filter((a) => a.ata && a.wallet && this.wallets.includes(a.wallet));
    const o = this.pick(owners);
    if (!o) return null;
    const nested = this.pick(this.mints);
    if (!nested) return null;
    const ixs = [];
    const ownerAta = o.key;
    if (this.rng.chance(0.6)) ixs.push(ata.create(this.rng.pick(this.payers), ownerAta, nested.key, o.program, true));
    if (this.rng.chance(0.6)) ixs.push(ata.create(this.rng.pick(this.payers), o.wallet, nested.key, o.program, true));
    ixs.push(ata.recoverNested(o.wallet, o.mint, nested.key, this.rng.chance(0.05) ? this.otherProgram(o.program) : o.program, !this.rng.chance(0.05)));
    return { ixs };
  }

  // ---- system

  opSystemTransfer() {
    const from = this.rng.chance(0.9) ? this.rng.pick(this.payers.concat(this.wallets)) : this.anyKey();
    const to = this.rng.chance(0.3) ? this.keypair() : this.anyKey();
    const bal = this.acct(from)?.lamports ?? 0n;
    const lamports = this.rng.chance(0.6) ? BigInt(this.rng.int(5_000_000)) : this.rng.amount(bal);
    const ixs = [system.transfer(from, to, lamports, !this.rng.chance(0.05))];
    return { ixs, after: () => { if (!this.plain.includes(to) && !this.keys.has(to)) this.plain.push(to); } };
  }

  opSystemCreate() {
    const payer = this.rng.pick(this.payers);
    // Never a fee payer: one that gets data or an owner pays no more fees.
    let to = this.rng.chance(0.9) ? this.keypair() : this.anyKey();
    if (this.payers.includes(to)) to = this.keypair();
    const space = this.rng.pick([0, 1, 10, 165, 1000, this.rng.int(20000), 10 * 1024 * 1024 + 1]);
    const lamports = this.rng.chance(0.8) ? rentExempt(space) : this.rng.amount(rentExempt(space));
    const owner = this.rng.pick([SYSTEM, TOKEN, this.rng.pick(this.wallets), MEMO]);
    let ixs;
    switch (this.rng.int(4)) {
      case 0: ixs = [system.createAccount(payer, to, lamports, space, owner)]; break;
      case 1: ixs = [system.transfer(payer, to, lamports), system.allocate(to, space)]; break;
      case 2: ixs = [system.transfer(payer, to, lamports), system.assign(to, owner)]; break;
      default: ixs = [system.transfer(payer, to, lamports), system.allocate(to, space), system.assign(to, owner)];
    }
    return { ixs, after: () => this.plain.push(to) };
  }

  async seededKey(base, seed, owner) {
    return (await import('./programs.mjs')).createWithSeed(base, seed, owner);
  }

  opSystemSeed() {
    // Seed-derived addresses are computed synchronously from sha256.
    const base = this.rng.pick(this.wallets.concat(this.payers));
    const seed = this.rng.chance(0.95) ? `s${this.rng.int(1000)}` : 'x'.repeat(33);
    const owner = this.rng.pick([SYSTEM, TOKEN, MEMO]);
    const derived = seedAddress(base, seed, owner);
    const payer = this.rng.pick(this.payers);
    const space = this.rng.pick([0, 8, 100]);
    switch (this.rng.int(4)) {
      case 0:
        return {
          ixs: [system.createAccountWithSeed(payer, derived, base, seed, rentExempt(space), space, owner)],
          after: () => this.seeded.push({ key: derived, base, seed, owner }),
        };
      case 1: {
        const s = this.pick(this.seeded.filter((x) => x.owner === SYSTEM));
        if (!s) return null;
        const bal = this.acct(s.key)?.lamports ?? 0n;
        return { ixs: [system.transferWithSeed(s.key, s.base, this.rng.pick(this.wallets), this.rng.amount(bal), s.seed, s.owner)] };
      }
      case 2:
        return {
          ixs: [system.transfer(payer, derived, rentExempt(space)), system.allocateWithSeed(derived, base, seed, space, owner)],
          after: () => this.seeded.push({ key: derived, base, seed, owner }),
        };
      default:
        return {
          ixs: [system.transfer(payer, derived, rentExempt(0)), system.assignWithSeed(derived, base, seed, owner)],
          after: () => this.seeded.push({ key: derived, base, seed, owner }),
        };
    }
  }

  // ---- durable nonces

  opNewNonce() {
    const payer = this.rng.pick(this.payers);
    const nonce = this.keypair();
    const authority = this.rng.pick(this.wallets.concat(this.payers));
    const size = this.rng.chance(0.05) ? this.rng.pick([79, 81, 0]) : NONCE_SIZE;
    const lamports = this.rng.chance(0.05) ? rentExempt(size) - 1n : rentExempt(size) + (this.rng.chance(0.3) ? 12345n : 0n);
    const owner = this.rng.chance(0.03) ? TOKEN : SYSTEM;
    const ixs = [system.createAccount(payer, nonce, lamports, size, owner), system.initializeNonce(nonce, authority)];
    if (this.rng.chance(0.04)) ixs.push(system.initializeNonce(nonce, authority));
    return { ixs, after: () => this.nonces.push({ key: nonce }) };
  }

  opNonce() {
    const n = this.pick(this.nonces);
    const a = this.acct(n.key);
    const st = decodeNonce(a?.data);
    const auth = st?.authority && this.rng.chance(0.9) ? st.authority : this.rng.pick(this.wallets);
    const signs = !this.rng.chance(0.04);
    switch (this.rng.int(6)) {
      case 0:
        return { ixs: [system.advanceNonce(n.key, auth, signs)] };
      case 1: {
        const bal = a?.lamports ?? 0n;
        const lamports = this.rng.chance(0.5) ? this.rng.amount(bal) : bal - rentExempt(NONCE_SIZE) + BigInt(this.rng.range(-2, 2));
        const to = this.rng.pick(this.wallets.concat([n.key]));
        return { ixs: [system.withdrawNonce(n.key, to, auth, lamports < 0n ? 0n : lamports, signs)] };
      }
      case 2:
        return { ixs: [system.authorizeNonce(n.key, auth, this.rng.pick(this.wallets.concat(this.payers)), signs)] };
      case 3:
        return { ixs: [system.upgradeNonce(n.key)] };
      case 4:
        return { ixs: [system.initializeNonce(n.key, this.rng.pick(this.wallets))] };
      default: {
        // A nonce account is a System account: plain transfers into it work.
        return { ixs: [system.transfer(this.rng.pick(this.payers), n.key, BigInt(this.rng.int(100000)))] };
      }
    }
  }

  // ---- address lookup tables

  opNewTable() {
    const authority = this.rng.pick(this.wallets);
    const payer = this.rng.pick(this.payers);
    const slot = this.svm.slot();
    let recent;
    if (this.rng.chance(0.9)) recent = slot - BigInt(this.rng.range(1, 6));
    else recent = this.rng.pick([slot, slot + 1n, slot - 600n, 0n]);
    if (recent < 0n) recent = 0n;
    const { key: table, bump } = alt.address(authority, recent);
    const b = this.rng.chance(0.04) ? (bump + 1) & 0xff : bump;
    const tkey = this.rng.chance(0.03) ? this.anyKey() : table;
    const ixs = [alt.create(tkey, authority, payer, recent, b, this.rng.chance(0.3))];
    if (this.rng.chance(0.4)) ixs.push(alt.extend(table, authority, payer, this.addressesForTable()));
    return { ixs, after: () => { if (!this.tables.some((t) => t.key === table)) this.tables.push({ key: table }); } };
  }

  addressesForTable() {
    const n = this.rng.chance(0.03) ? this.rng.pick([0, 38]) : this.rng.range(1, 6);
    const pools = [this.wallets, this.accounts.map((a) => a.key), this.mints.map((m) => m.key), this.plain, this.payers,
      [TOKEN, TOKEN22, SYSTEM, RENT, MEMO]];
    const out = [];
    for (let i = 0; i < n; i++) {
      const pool = this.rng.pick(pools.filter((p) => p.length));
      out.push(this.rng.pick(pool));
    }
    return out;
  }

  opTable() {
    const t = this.pick(this.tables);
    const st = decodeTable(this.acct(t.key)?.data);
    const auth = st?.authority && this.rng.chance(0.9) ? st.authority : this.rng.pick(this.wallets);
    const signs = !this.rng.chance(0.04);
    switch (this.rng.weighted({ extend: 5, freeze: 1, deactivate: 1.5, close: 1.5, jump: 0.15 })) {
      case 'extend': {
        const payer = this.rng.chance(0.85) ? this.rng.pick(this.payers) : null;
        return { ixs: [alt.extend(t.key, auth, payer, this.addressesForTable(), signs)] };
      }
      case 'freeze':
        return { ixs: [alt.freeze(t.key, auth, signs)] };
      case 'deactivate':
        return { ixs: [alt.deactivate(t.key, auth, signs)] };
      case 'jump':
        // Let the run skip past the 512-slot cool-down once in a while.
        this.wantJump = true;
        return { ixs: [alt.deactivate(t.key, auth, signs)] };
      default: {
        const to = this.rng.chance(0.05) ? t.key : this.rng.pick(this.wallets.concat(this.payers));
        return { ixs: [alt.close(t.key, auth, to, signs)] };
      }
    }
  }

  // ---- Token-2022 extensions

  opNewExtMint() {
    const mint = this.keypair();
    const payer = this.rng.pick(this.payers);
    const decimals = this.rng.pick([0, 2, 6, 9]);
    const authority = this.rng.pick(this.wallets);
    const freeze = this.rng.chance(0.7) ? this.rng.pick(this.wallets) : null;
    const pool = [EXT.TransferFeeConfig, EXT.TransferFeeConfig, EXT.MintCloseAuthority, EXT.DefaultAccountState,
      EXT.NonTransferable, EXT.InterestBearingConfig, EXT.PermanentDelegate, EXT.TransferHook, EXT.MetadataPointer,
      EXT.MetadataPointer, EXT.GroupPointer, EXT.GroupMemberPointer, EXT.ScaledUiAmount, EXT.Pausable];
    const exts = [];
    for (let n = this.rng.range(1, 4); exts.length < n;) {
      const t = this.rng.pick(pool);
      if (!exts.includes(t)) exts.push(t);
    }
    if (exts.includes(EXT.ScaledUiAmount) && exts.includes(EXT.InterestBearingConfig) && this.rng.chance(0.8)) {
      exts.splice(exts.indexOf(EXT.ScaledUiAmount), 1);
    }
    const who = () => (this.rng.chance(0.8) ? this.rng.pick(this.wallets) : null);
    const init = [];
    let metadata = null;
    let group = false;
    for (const t of exts) {
      switch (t) {
        case EXT.TransferFeeConfig:
          init.push(ext.initTransferFee(mint, who(), who(), this.rng.pick([0, 1, 50, 100, 10000, 10001]),
            this.rng.pick([0n, 1n, 5000n, 10n ** 9n, U64_MAX])));
          break;
        case EXT.MintCloseAuthority: init.push(ext.initMintCloseAuthority(mint, who())); break;
        case EXT.DefaultAccountState: init.push(ext.initDefaultState(mint, this.rng.pick([1, 2, 2, 0, 3]))); break;
        case EXT.NonTransferable: init.push(ext.initNonTransferable(mint)); break;
        case EXT.InterestBearingConfig: init.push(ext.initInterestBearing(mint, who(), this.rng.pick([0, 500, -500, 32767, -32768, 25]))); break;
        case EXT.PermanentDelegate: init.push(ext.initPermanentDelegate(mint, this.rng.pick(this.wallets))); break;
        case EXT.TransferHook: init.push(ext.initTransferHook(mint, who(), null)); break;
        case EXT.MetadataPointer: {
          const self = this.rng.chance(0.85);
          init.push(ext.initPointer('MetadataPointer', mint, who(), self ? mint : this.keypair()));
          if (self && this.rng.chance(0.8)) {
            metadata = { name: this.rng.pick(['Ferry', 'Test Token', '', 'ü'.repeat(5)]), symbol: this.rng.pick(['FRY', 'T', '']),
              uri: this.rng.pick(['https://example.com/t.json', '', 'x'.repeat(200)]) };
          }
          break;
        }
        case EXT.GroupPointer: {
          init.push(ext.initPointer('GroupPointer', mint, who(), mint));
          group = this.rng.chance(0.8);
          break;
        }
        case EXT.GroupMemberPointer: init.push(ext.initPointer('GroupMemberPointer', mint, who(), mint)); break;
        case EXT.ScaledUiAmount: init.push(ext.initScaledUi(mint, who(), this.rng.pick([1, 2.5, 0.001, 1e6, 0, -1]))); break;
        case EXT.Pausable: init.push(ext.initPausable(mint, this.rng.pick(this.wallets))); break;
      }
    }
    const size = mintSize(exts);
    let full = size;
    if (metadata) full += 4 + metadataSize(metadata.name, metadata.symbol, metadata.uri);
    if (group) full += 4 + SIZE[EXT.TokenGroup];
    const lamports = this.rng.chance(0.05) ? rentExempt(size) : rentExempt(full);
    const ixs = [system.createAccount(payer, mint, lamports, this.rng.chance(0.03) ? size - 4 : size, TOKEN22)];
    for (let i = init.length - 1; i > 0; i--) {
      const j = this.rng.int(i + 1);
      [init[i], init[j]] = [init[j], init[i]];
    }
    ixs.push(...init);
    ixs.push(this.rng.chance(0.5) ? token.initializeMint2(TOKEN22, mint, decimals, authority, freeze)
      : token.initializeMint(TOKEN22, mint, decimals, authority, freeze));
    if (metadata) {
      ixs.push(ext.metadataInit(mint, this.rng.pick(this.wallets), mint, this.rng.chance(0.95) ? authority : this.rng.pick(this.wallets),
        metadata.name, metadata.symbol, metadata.uri));
    }
    if (group) {
      ixs.push(ext.groupInit(mint, mint, this.rng.chance(0.95) ? authority : this.rng.pick(this.wallets), who(), BigInt(this.rng.pick([0, 1, 3, 100]))));
    }
    return { ixs, after: () => this.mints.push({ key: mint, program: TOKEN22, decimals, exts }) };
  }

  /** mintExt picks a Token-2022 mint with extensions and its decoded state. */
  extMint() {
    const m = this.pick(this.extMints());
    const a = m && this.acct(m.key);
    if (!a) return null;
    return { ...m, data: a.data, st: decodeMint(a.data) };
  }

  opExtMint() {
    const m = this.extMint();
    if (!m) return null;
    const present = new Set([...extValuesOf(m.data)]);
    const choices = [];
    if (present.has(EXT.TransferFeeConfig)) choices.push('feeTransfer', 'feeTransfer', 'harvest', 'withdrawMint', 'withdrawAccounts', 'setFee');
    if (present.has(EXT.DefaultAccountState)) choices.push('defaultState');
    if (present.has(EXT.InterestBearingConfig)) choices.push('rate');
    if (present.has(EXT.TransferHook)) choices.push('hook');
    if (present.has(EXT.MetadataPointer)) choices.push('metadataPointer');
    if (present.has(EXT.GroupPointer)) choices.push('groupPointer');
    if (present.has(EXT.GroupMemberPointer)) choices.push('memberPointer');
    if (present.has(EXT.ScaledUiAmount)) choices.push('multiplier');
    if (present.has(EXT.Pausable)) choices.push('pause');
    if (present.has(EXT.TokenMetadata)) choices.push('metaField', 'metaField', 'metaRemove', 'metaAuthority', 'metaEmit');
    if (present.has(EXT.TokenGroup)) choices.push('groupMax', 'groupAuthority');
    if (present.has(EXT.MintCloseAuthority)) choices.push('closeMint');
    choices.push('excess', 'permanent');
    const value = (t) => extValue(m.data, t);
    const authAt = (t, off) => {
      const v = value(t);
      const k = v && v.subarray(off, off + 32);
      const key = k && !k.every((b) => b === 0) ? b58(k) : null;
      return this.rng.chance(0.92) && key ? { key, signs: !this.rng.chance(0.04) } : { key: this.rng.pick(this.wallets), signs: true };
    };
    const accountsOfMint = this.accounts.filter((a) => a.mint === m.key);
    switch (this.rng.pick(choices)) {
      case 'feeTransfer': {
        const src = this.pick(accountsOfMint);
        const dst = this.pick(accountsOfMint);
        const st = src && this.tokenState(src.key);
        if (!st || !dst) return null;
        const v = value(EXT.TransferFeeConfig);
        const amount = this.rng.spend(st.amount);
        const fee = transferFee(v, this.svm.epoch(), amount);
        const s = this.signerFor(st.owner);
        const ixs = [];
        if (this.rng.chance(0.3)) ixs.push(memo.v2(Buffer.from('fee')));
        ixs.push(ext.transferCheckedWithFee(src.key, m.key, dst.key, s.key, amount, this.rng.chance(0.95) ? m.decimals : 1,
          this.rng.chance(0.9) ? fee : fee + 1n, s.signs, s.signers));
        return { ixs };
      }
      case 'harvest':
        return { ixs: [ext.harvestToMint(m.key, accountsOfMint.slice(0, this.rng.range(0, 4)).map((a) => a.key))] };
      case 'withdrawMint': {
        const a = authAt(EXT.TransferFeeConfig, 32);
        const dst = this.pick(accountsOfMint);
        if (!dst) return null;
        return { ixs: [ext.withdrawWithheldFromMint(m.key, dst.key, a.key, a.signs)] };
      }
      case 'withdrawAccounts': {
        const a = authAt(EXT.TransferFeeConfig, 32);
        const dst = this.pick(accountsOfMint);
        if (!dst) return null;
        return { ixs: [ext.withdrawWithheldFromAccounts(m.key, dst.key, a.key, accountsOfMint.slice(0, this.rng.range(0, 3)).map((x) => x.key), a.signs)] };
      }
      case 'setFee': {
        const a = authAt(EXT.TransferFeeConfig, 0);
        return { ixs: [ext.setTransferFee(m.key, a.key, this.rng.pick([0, 25, 10000, 10001]), this.rng.pick([0n, 77n, U64_MAX]), a.signs)] };
      }
      case 'defaultState': {
        const f = m.st?.freezeAuthority ? { key: b58(m.st.freezeAuthority), signs: true } : { key: this.rng.pick(this.wallets), signs: true };
        return { ixs: [ext.updateDefaultState(m.key, f.key, this.rng.pick([1, 2, 0, 3]), f.signs)] };
      }
      case 'rate': {
        const a = authAt(EXT.InterestBearingConfig, 0);
        return { ixs: [ext.updateRate(m.key, a.key, this.rng.pick([0, 100, -100, 32767, -32768]), a.signs)] };
      }
      case 'hook': {
        const a = authAt(EXT.TransferHook, 0);
        return { ixs: [ext.updateTransferHook(m.key, a.key, null, a.signs)] };
      }
      case 'metadataPointer':
      case 'groupPointer':
      case 'memberPointer': {
        const kind = { metadataPointer: 'MetadataPointer', groupPointer: 'GroupPointer', memberPointer: 'GroupMemberPointer' }[this.rng.pick(['metadataPointer', 'groupPointer', 'memberPointer'].filter((c) => choices.includes(c)))];
        const a = authAt(EXT[kind], 0);
        return { ixs: [ext.updatePointer(kind, m.key, a.key, this.rng.chance(0.7) ? m.key : this.rng.pick(this.wallets), a.signs)] };
      }
      case 'multiplier': {
        const a = authAt(EXT.ScaledUiAmount, 0);
        const now = this.svm.unixTimestamp();
        return { ixs: [ext.updateMultiplier(m.key, a.key, this.rng.pick([1, 3, 0.5, 0, -2]), this.rng.pick([0n, now, now + 100n, now - 5n]), a.signs)] };
      }
      case 'pause': {
        const a = authAt(EXT.Pausable, 0);
        return { ixs: [ext.pause(m.key, a.key, this.rng.chance(0.5), a.signs)] };
      }
      case 'metaField':
      case 'metaRemove':
      case 'metaAuthority':
      case 'metaEmit': {
        const a = authAt(EXT.TokenMetadata, 0);
        const ixs = [];
        if (this.rng.chance(0.7)) ixs.push(system.transfer(this.rng.pick(this.payers), m.key, BigInt(this.rng.pick([10000, 100000, 1000000]))));
        const keys = ['color', 'size', 'x'];
        switch (this.rng.pick(['metaField', 'metaField', 'metaRemove', 'metaAuthority', 'metaEmit'])) {
          case 'metaField':
            ixs.push(ext.metadataUpdateField(m.key, a.key, this.rng.chance(0.5) ? this.rng.int(3) : this.rng.pick(keys),
              this.rng.pick(['blue', '', 'a much longer value than before', 'ü']), a.signs));
            break;
          case 'metaRemove':
            ixs.push(ext.metadataRemoveKey(m.key, a.key, this.rng.pick(keys), this.rng.chance(0.5), a.signs));
            break;
          case 'metaAuthority':
            ixs.push(ext.metadataUpdateAuthority(m.key, a.key, this.rng.chance(0.2) ? null : this.rng.pick(this.wallets), a.signs));
            break;
          default:
            ixs.push(ext.metadataEmit(m.key, this.rng.pick([null, 0n, 10n, 100n]), this.rng.pick([null, 5n, 50n, 1000n])));
        }
        return { ixs };
      }
      case 'groupMax': {
        const a = authAt(EXT.TokenGroup, 0);
        return { ixs: [ext.groupUpdateMaxSize(m.key, a.key, BigInt(this.rng.pick([0, 1, 2, 10])), a.signs)] };
      }
      case 'groupAuthority': {
        const a = authAt(EXT.TokenGroup, 0);
        return { ixs: [ext.groupUpdateAuthority(m.key, a.key, this.rng.chance(0.2) ? null : this.rng.pick(this.wallets), a.signs)] };
      }
      case 'closeMint': {
        const a = authAt(EXT.MintCloseAuthority, 0);
        return { ixs: [token.closeAccount(TOKEN22, m.key, this.rng.pick(this.wallets), a.key, a.signs)] };
      }
      case 'excess': {
        const s = this.signerFor(m.st?.mintAuthority ?? null);
        const ixs = [];
        if (this.rng.chance(0.5)) ixs.push(system.transfer(this.rng.pick(this.payers), m.key, BigInt(this.rng.range(1, 50000))));
        ixs.push(ext.withdrawExcessLamports(m.key, this.rng.pick(this.wallets), s.key, s.signs, s.signers));
        return { ixs };
      }
      default: {
        // The permanent delegate (or a stranger) moves or burns tokens.
        const v = value(EXT.PermanentDelegate);
        const src = this.pick(accountsOfMint);
        const st = src && this.tokenState(src.key);
        if (!st) return null;
        const d = v && this.rng.chance(0.9) ? b58(v) : this.rng.pick(this.wallets);
        const amount = this.rng.amount(st.amount);
        if (this.rng.chance(0.5)) {
          const dst = this.pick(accountsOfMint);
          return { ixs: [token.transferChecked(TOKEN22, src.key, m.key, dst.key, d, amount, m.decimals)] };
        }
        return { ixs: [token.burnChecked(TOKEN22, src.key, m.key, d, amount, m.decimals)] };
      }
    }
  }

  opExtAccount() {
    const a = this.pick(this.accounts.filter((x) => x.program === TOKEN22));
    const st = a && this.tokenState(a.key);
    if (!st) return null;
    const s = this.signerFor(st.owner);
    switch (this.rng.int(5)) {
      case 0: {
        const types = this.rng.pick([[EXT.MemoTransfer], [EXT.CpiGuard], [EXT.MemoTransfer, EXT.CpiGuard], [EXT.ImmutableOwner], [EXT.TransferFeeConfig], []]);
        return { ixs: [ext.reallocate(a.key, this.rng.pick(this.payers), s.key, types, s.signs, s.signers)] };
      }
      case 1:
        return { ixs: [ext.memoTransfer(a.key, s.key, this.rng.chance(0.6), s.signs, s.signers)] };
      case 2:
        return { ixs: [ext.cpiGuard(a.key, s.key, this.rng.chance(0.6), s.signs, s.signers)] };
      case 3: {
        const ixs = [];
        if (this.rng.chance(0.6)) ixs.push(system.transfer(this.rng.pick(this.payers), a.key, BigInt(this.rng.range(1, 90000))));
        ixs.push(ext.withdrawExcessLamports(a.key, this.rng.pick(this.wallets), s.key, s.signs, s.signers));
        return { ixs };
      }
      default: {
        // A memo-guarded transfer: memo first, then the transfer.
        const dst = this.pick(this.accounts.filter((x) => x.mint === a.mint));
        const m = this.mintState(a.mint);
        if (!dst || !m) return null;
        const ixs = [];
        if (this.rng.chance(0.7)) ixs.push(memo.v2(Buffer.from('memo for transfer')));
        ixs.push(token.transferChecked(TOKEN22, a.key, a.mint, dst.key, s.key, this.rng.amount(st.amount), m.decimals, s.signs, s.signers));
        return { ixs };
      }
    }
  }

  opGroupMember() {
    const groups = this.extMints().filter((m) => extValue(this.acct(m.key)?.data, EXT.TokenGroup));
    const members = this.extMints().filter((m) => m.exts.includes(EXT.GroupMemberPointer));
    const g = this.pick(groups);
    const mm = this.pick(members);
    if (!g || !mm) return null;
    const gv = extValue(this.acct(g.key).data, EXT.TokenGroup);
    const ua = gv.subarray(0, 32).every((b) => b === 0) ? this.rng.pick(this.wallets) : b58(gv.subarray(0, 32));
    const mst = this.mintState(mm.key);
    const mauth = mst?.mintAuthority ? b58(mst.mintAuthority) : this.rng.pick(this.wallets);
    const ixs = [];
    if (this.rng.chance(0.8)) ixs.push(system.transfer(this.rng.pick(this.payers), mm.key, rentExempt(4 + SIZE[EXT.TokenGroupMember]) - rentExempt(0)));
    ixs.push(ext.groupInitMember(mm.key, mm.key, this.rng.chance(0.9) ? mauth : this.rng.pick(this.wallets), g.key,
      this.rng.chance(0.9) ? ua : this.rng.pick(this.wallets)));
    return { ixs };
  }

  // ---- memo

  opMemo() {
    const bytes = this.rng.chance(0.8)
      ? Buffer.from(this.rng.pick(['hello', 'invoice 42', '', 'ünïcödé ✓', 'x'.repeat(this.rng.int(300))]))
      : Buffer.from(this.rng.bytes(this.rng.range(1, 20)));
    const signers = [];
    for (let i = this.rng.int(3); i > 0; i--) signers.push([this.rng.pick(this.payers.concat(this.wallets)), !this.rng.chance(0.2)]);
    return { ixs: [this.rng.chance(0.8) ? memo.v2(bytes, signers) : memo.v1(bytes, signers)] };
  }
}

/** extValuesOf lists the extension types present in Token-2022 account data. */
function extValuesOf(data) {
  const out = [];
  if (!data || data.length <= ACCOUNT_SIZE) return out;
  for (let off = ACCOUNT_SIZE + 1; off + 4 <= data.length;) {
    const t = data.readUInt16LE(off);
    if (t === 0) break;
    out.push(t);
    off += 4 + data.readUInt16LE(off + 2);
  }
  return out;
}

/** transferFee is the fee Token-2022 charges on amount at epoch. */
export function transferFee(v, epoch, amount) {
  if (!v) return 0n;
  const newerEpoch = v.readBigUInt64LE(90);
  const off = BigInt(epoch) >= newerEpoch ? 90 : 72;
  const max = v.readBigUInt64LE(off + 8);
  const bps = BigInt(v.readUInt16LE(off + 16));
  if (bps === 0n || amount === 0n) return 0n;
  const fee = (amount * bps + 9999n) / 10000n;
  return fee > max ? max : fee;
}

export function keyOf(bytes) {
  return bytes ? b58(bytes) : null;
}

import { b58, unb58 } from './wire.mjs';

/** seedAddress is Pubkey::create_with_seed (no on-curve check needed). */
export function seedAddress(base, seed, owner) {
  return b58(sha256(unb58(base), Buffer.from(seed), unb58(owner)));
}

export { ALT, ATA, MEMO, TOKEN, TOKEN22, alt, ext, EXT, u64le, w };
