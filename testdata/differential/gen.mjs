// The random transaction generator. It keeps a world of keys it holds and
// of the accounts it created (mints, token accounts, multisigs, nonce
// accounts, lookup tables) and reads their current state from LiteSVM
// (both sides hold the same state, or the run has already reported a
// divergence), then builds transactions that are mostly plausible and often
// wrong on purpose: edge amounts, wrong accounts, missing or wrong
// signers, the other token program, priority fees, v0 messages.

import { keypairFromSeed, sha256, u64le } from './wire.mjs';
import {
  ALT, ATA, INCINERATOR, MEMO, NATIVE_MINT, NATIVE_MINT_2022, RENT, SYSTEM, TOKEN, TOKEN22, CLOCK,
  alt, ata, ataAddress, computeBudget, memo, r, system, token, w,
} from './programs.mjs';
import { ext, EXT } from './token2022.mjs';

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
    };
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
    return {
      payer, ixs, labels: parts.map((p) => p.op), version: 'legacy', tables: [],
      after: (ok) => { if (ok) for (const p of parts) p.after?.(); },
    };
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
    const size = this.rng.chance(0.05) ? this.rng.pick([164, 166, MINT_SIZE, MULTISIG_SIZE]) : ACCOUNT_SIZE;
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

  /** account picks a token account with its decoded state. */
  tokenAccount() {
    const a = this.pick(this.accounts);
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
    const amount = this.rng.chance(0.7) ? this.rng.amount(a.st.amount) : this.rng.amount(a.st.delegatedAmount);
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
    const amount = this.rng.amount(a.st.amount);
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
    const a = this.tokenAccount();
    if (!a) return null;
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
    const to = this.rng.chance(0.9) ? this.keypair() : this.anyKey();
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

export function keyOf(bytes) {
  return bytes ? b58(bytes) : null;
}

import { b58, unb58 } from './wire.mjs';

/** seedAddress is Pubkey::create_with_seed (no on-curve check needed). */
export function seedAddress(base, seed, owner) {
  return b58(sha256(unb58(base), Buffer.from(seed), unb58(owner)));
}

export { ALT, ATA, MEMO, TOKEN, TOKEN22, alt, ext, EXT, u64le, w };
