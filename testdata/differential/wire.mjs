// Transaction wire format, written out here so the generator controls every
// byte: which accounts sign, which are writable, legacy or v0 messages and
// which keys load through lookup tables. Keys are base58 strings throughout;
// keypairs are derived from seeds so a run is reproducible.

import { createHash, createPrivateKey, createPublicKey, sign as edSign } from 'node:crypto';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Map([...ALPHABET].map((c, i) => [c, BigInt(i)]));

/** b58 encodes bytes (Bitcoin alphabet). */
export function b58(bytes) {
  let n = 0n;
  for (const b of bytes) n = n * 256n + BigInt(b);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/** unb58 decodes base58 into exactly size bytes (32 for keys). */
export function unb58(s, size = 32) {
  let n = 0n;
  for (const c of s) {
    const v = INDEX.get(c);
    if (v === undefined) throw new Error(`bad base58 ${s}`);
    n = n * 58n + v;
  }
  const out = new Uint8Array(size);
  for (let i = size - 1; i >= 0 && n > 0n; i--) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

/** keypairFromSeed derives an ed25519 keypair from 32 seed bytes. */
export function keypairFromSeed(seed) {
  const priv = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, Buffer.from(seed)]), format: 'der', type: 'pkcs8' });
  const pub = createPublicKey(priv).export({ format: 'der', type: 'spki' }).subarray(-32);
  return { publicKey: b58(pub), priv, secret: Uint8Array.from([...seed, ...pub]) };
}

/** shortVec encodes Solana's compact-u16 length. */
export function shortVec(n) {
  const out = [];
  for (;;) {
    let b = n & 0x7f;
    n >>= 7;
    if (n === 0) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

/** u64le encodes a bigint (or number) as 8 bytes little-endian. */
export function u64le(v) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, BigInt(v)));
  return [...b];
}

export function u32le(v) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return [...b];
}

export function u16le(v) {
  return [v & 0xff, (v >> 8) & 0xff];
}

/** sha256 of the concatenated byte arrays. */
export function sha256(...parts) {
  const h = createHash('sha256');
  for (const p of parts) h.update(Buffer.from(p));
  return new Uint8Array(h.digest());
}

/**
 * compile builds a message. instructions: [{programId, keys: [{pubkey,
 * isSigner, isWritable}], data}]. tables (v0 only): [{key, addresses}]:
 * non-signer keys that are not invoked programs and appear in a table are
 * loaded through it. Returns {bytes, signers, keys (static + loaded, in
 * index order), loaded: {writable, readonly}}.
 */
export function compile({ payer, instructions, blockhash, version = 'legacy', tables = [] }) {
  const metas = new Map();
  const order = [];
  const note = (pubkey, isSigner, isWritable) => {
    let m = metas.get(pubkey);
    if (!m) {
      m = { pubkey, isSigner: false, isWritable: false, invoked: false };
      metas.set(pubkey, m);
      order.push(pubkey);
    }
    m.isSigner ||= isSigner;
    m.isWritable ||= isWritable;
    return m;
  };
  note(payer, true, true);
  for (const ix of instructions) {
    for (const k of ix.keys) note(k.pubkey, k.isSigner, k.isWritable);
    note(ix.programId, false, false).invoked = true;
  }
  const lookups = tables.map((t) => ({ key: t.key, addresses: t.addresses, writable: [], readonly: [], wkeys: [], rkeys: [] }));
  const statics = [];
  if (version === 'v0') {
    for (const k of order) {
      const m = metas.get(k);
      let placed = false;
      if (!m.isSigner && !m.invoked && k !== payer) {
        for (const l of lookups) {
          const i = l.addresses.indexOf(k);
          if (i >= 0) {
            (m.isWritable ? l.writable : l.readonly).push(i);
            (m.isWritable ? l.wkeys : l.rkeys).push(k);
            placed = true;
            break;
          }
        }
      }
      if (!placed) statics.push(k);
    }
  } else {
    statics.push(...order);
  }
  const group = (m) => (m.isSigner ? (m.isWritable ? 0 : 1) : (m.isWritable ? 2 : 3));
  const sorted = statics
    .map((k, i) => ({ k, i, g: k === payer ? -1 : group(metas.get(k)) }))
    .sort((a, b) => a.g - b.g || a.i - b.i)
    .map((x) => x.k);
  const numSigners = sorted.filter((k) => metas.get(k).isSigner).length;
  const roSigned = sorted.filter((k) => metas.get(k).isSigner && !metas.get(k).isWritable).length;
  const roUnsigned = sorted.filter((k) => !metas.get(k).isSigner && !metas.get(k).isWritable).length;
  const used = lookups.filter((l) => l.writable.length + l.readonly.length > 0);
  const keys = [...sorted, ...used.flatMap((l) => l.wkeys), ...used.flatMap((l) => l.rkeys)];
  const index = new Map(keys.map((k, i) => [k, i]));
  const bytes = [];
  if (version === 'v0') bytes.push(0x80);
  bytes.push(numSigners, roSigned, roUnsigned);
  bytes.push(...shortVec(sorted.length));
  for (const k of sorted) bytes.push(...unb58(k));
  bytes.push(...unb58(blockhash));
  bytes.push(...shortVec(instructions.length));
  for (const ix of instructions) {
    bytes.push(index.get(ix.programId));
    bytes.push(...shortVec(ix.keys.length));
    for (const k of ix.keys) bytes.push(index.get(k.pubkey));
    bytes.push(...shortVec(ix.data.length));
    bytes.push(...ix.data);
  }
  if (version === 'v0') {
    bytes.push(...shortVec(used.length));
    for (const l of used) {
      bytes.push(...unb58(l.key));
      bytes.push(...shortVec(l.writable.length), ...l.writable);
      bytes.push(...shortVec(l.readonly.length), ...l.readonly);
    }
  }
  return {
    bytes: Uint8Array.from(bytes),
    signers: sorted.slice(0, numSigners),
    keys,
    writable: keys.map((k) => metas.get(k).isWritable || k === payer),
    loaded: { writable: used.flatMap((l) => l.wkeys), readonly: used.flatMap((l) => l.rkeys) },
  };
}

/**
 * signTx signs a compiled message with the keypairs given (a map from
 * public key to keypair); a required signer without a keypair gets 64 zero
 * bytes, which no verifier accepts.
 */
export function signTx(msg, keypairs) {
  const sigs = msg.signers.map((k) => {
    const kp = keypairs.get(k);
    return kp ? new Uint8Array(edSign(null, Buffer.from(msg.bytes), kp.priv)) : new Uint8Array(64);
  });
  const out = [...shortVec(sigs.length)];
  for (const s of sigs) out.push(...s);
  out.push(...msg.bytes);
  return { raw: Uint8Array.from(out), signature: b58(sigs[0]) };
}
