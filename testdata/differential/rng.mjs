// A seeded random source (sfc32 seeded through sha256 of the seed string),
// so a seed and a transaction index name the same transaction in every run.

import { createHash } from 'node:crypto';

export class Rng {
  constructor(seed) {
    const h = createHash('sha256').update(String(seed)).digest();
    this.s = [h.readUInt32LE(0), h.readUInt32LE(4), h.readUInt32LE(8), h.readUInt32LE(12)];
    for (let i = 0; i < 16; i++) this.u32();
  }

  u32() {
    let [a, b, c, d] = this.s;
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    this.s = [a, b, c, d];
    return t;
  }

  /** int returns an integer in [0, n). */
  int(n) {
    return Math.floor((this.u32() / 2 ** 32) * n);
  }

  /** range returns an integer in [lo, hi]. */
  range(lo, hi) {
    return lo + this.int(hi - lo + 1);
  }

  chance(p) {
    return this.u32() / 2 ** 32 < p;
  }

  pick(arr) {
    return arr[this.int(arr.length)];
  }

  /** weighted picks a key of {key: weight}. */
  weighted(table) {
    const entries = Object.entries(table).filter(([, wt]) => wt > 0);
    let total = 0;
    for (const [, wt] of entries) total += wt;
    let x = (this.u32() / 2 ** 32) * total;
    for (const [k, wt] of entries) {
      if ((x -= wt) < 0) return k;
    }
    return entries[entries.length - 1][0];
  }

  bytes(n) {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }

  u64() {
    return (BigInt(this.u32()) << 32n) | BigInt(this.u32());
  }

  /**
   * spend picks an amount to spend from a balance: usually a valid one
   * (a share of it, all of it), sometimes an edge case (amount).
   */
  spend(balance) {
    balance = BigInt(balance);
    if (balance === 0n || this.chance(0.25)) return this.amount(balance);
    if (this.chance(0.15)) return balance;
    return 1n + BigInt(Math.floor(Number(balance - 1n) * (this.u32() / 2 ** 32)));
  }

  /**
   * amount picks an edge-biased amount against a balance: 0, 1, the whole
   * balance, one more, a random share, or a huge value.
   */
  amount(balance) {
    balance = BigInt(balance);
    switch (this.int(10)) {
      case 0: return 0n;
      case 1: return 1n;
      case 2: return balance;
      case 3: return balance + 1n;
      case 4: return 2n ** 64n - 1n;
      case 5: return 2n ** 63n;
      default: return balance > 0n ? BigInt(Math.floor(Number(balance) * (this.u32() / 2 ** 32))) : BigInt(this.int(1000));
    }
  }
}
