package token

import (
	"encoding/binary"

	"github.com/gagliardetto/solana-go"
)

// Byte offsets of the token-account, mint and multisig layouts. Both
// programs work on the account bytes in place, as the deployed programs
// do, so that the bytes they leave behind (cleared options keep or lose
// their old keys depending on the program) match byte for byte.
const (
	accMint         = 0
	accOwner        = 32
	accAmount       = 64
	accDelegate     = 72 // COption<Pubkey>: 4-byte tag, key at +4
	accState        = 108
	accIsNative     = 109 // COption<u64>: 4-byte tag, reserve at +4
	accDelegatedAmt = 121
	accClose        = 129 // COption<Pubkey>

	mintAuthority = 0 // COption<Pubkey>
	mintSupply    = 36
	mintDecimals  = 44
	mintInit      = 45
	mintFreeze    = 46 // COption<Pubkey>

	msM       = 0
	msN       = 1
	msInit    = 2
	msSigners = 3
)

// Token account states.
const (
	stateUninitialized = 0
	stateInitialized   = 1
	stateFrozen        = 2
)

func u64At(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

func putU64(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }

func keyAt(b []byte, off int) solana.PublicKey {
	var k solana.PublicKey
	copy(k[:], b[off:off+32])
	return k
}

func putKey(b []byte, off int, k solana.PublicKey) { copy(b[off:off+32], k[:]) }

// accountState is a view of a token account's 165-byte base.
type accountState []byte

func (a accountState) mint() solana.PublicKey      { return keyAt(a, accMint) }
func (a accountState) owner() solana.PublicKey     { return keyAt(a, accOwner) }
func (a accountState) amount() uint64              { return u64At(a, accAmount) }
func (a accountState) setAmount(v uint64)          { putU64(a, accAmount, v) }
func (a accountState) delegatedAmount() uint64     { return u64At(a, accDelegatedAmt) }
func (a accountState) setDelegatedAmount(v uint64) { putU64(a, accDelegatedAmt, v) }
func (a accountState) state() byte                 { return a[accState] }

// mintState is a view of a mint's 82-byte base.
type mintState []byte

func (m mintState) supply() uint64     { return u64At(m, mintSupply) }
func (m mintState) setSupply(v uint64) { putU64(m, mintSupply, v) }
func (m mintState) decimals() uint8    { return m[mintDecimals] }
