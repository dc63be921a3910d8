package espl

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/gagliardetto/solana-go"
)

// Stealth pool constants (§3.1, §4).
const (
	// MaxHandleLen is the longest stealth handle, in bytes.
	MaxHandleLen = 255
	// HandleStorageSize is the size of a stored handle:
	// len u8 ‖ handle ‖ zero padding.
	HandleStorageSize = 256
	// MaxStealthDestinations is the most destinations a pool holds.
	MaxStealthDestinations = 10
	// StealthFlagSplitAcrossKeys (flags bit 0) lets each split of a
	// transfer resolve to a different destination.
	StealthFlagSplitAcrossKeys uint8 = 1 << 0
	// StealthPoolSize is the size of a stealth pool account.
	StealthPoolSize = 619
	// StealthPoolDiscriminator is the first 8 bytes of a pool account.
	StealthPoolDiscriminator = "stpool@1"
)

// ErrInvalidHandle is returned for handles that are empty, longer than
// 255 bytes or not valid UTF-8, and for malformed handle storage.
var ErrInvalidHandle = errors.New("invalid stealth handle")

// ErrInvalidStealthPool is returned for malformed pool contents: unknown
// flag bits, a destination count outside 1..10, or a zero destination.
var ErrInvalidStealthPool = errors.New("invalid stealth pool")

// ValidateHandle checks that handle is 1..255 bytes of valid UTF-8. The
// handle is otherwise used verbatim: "Alice" and "alice" are different
// pools.
func ValidateHandle(handle []byte) error {
	if len(handle) == 0 || len(handle) > MaxHandleLen {
		return fmt.Errorf("%w: length %d, want 1..%d bytes", ErrInvalidHandle, len(handle), MaxHandleLen)
	}
	if !utf8.Valid(handle) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidHandle)
	}
	return nil
}

// EncodeHandle returns the 256-byte storage form of handle:
// len u8 ‖ handle ‖ zero padding.
func EncodeHandle(handle []byte) ([HandleStorageSize]byte, error) {
	var out [HandleStorageSize]byte
	if err := ValidateHandle(handle); err != nil {
		return out, fmt.Errorf("encode handle: %w", err)
	}
	out[0] = byte(len(handle))
	copy(out[1:], handle)
	return out, nil
}

// DecodeHandle parses 256-byte handle storage. It rejects a length outside
// 1..255, non-zero padding and invalid UTF-8. The result aliases storage.
func DecodeHandle(storage []byte) ([]byte, error) {
	if len(storage) != HandleStorageSize {
		return nil, fmt.Errorf("decode handle: %w: storage is %d bytes, want %d", ErrInvalidHandle, len(storage), HandleStorageSize)
	}
	n := int(storage[0])
	if n == 0 {
		return nil, fmt.Errorf("decode handle: %w: zero length", ErrInvalidHandle)
	}
	for _, b := range storage[1+n:] {
		if b != 0 {
			return nil, fmt.Errorf("decode handle: %w: non-zero padding", ErrInvalidHandle)
		}
	}
	h := storage[1 : 1+n]
	if err := ValidateHandle(h); err != nil {
		return nil, fmt.Errorf("decode handle: %w", err)
	}
	return h, nil
}

// ValidateStealthDestinations checks a pool update: no unknown flag bits
// and 1..10 destinations. Ferry additionally rejects the all-zero key
// (the System program id), which can never own tokens; the reference does
// not say whether the program does.
func ValidateStealthDestinations(flags uint8, destinations []solana.PublicKey) error {
	if flags&^StealthFlagSplitAcrossKeys != 0 {
		return fmt.Errorf("%w: unknown flag bits %#02x", ErrInvalidStealthPool, flags&^StealthFlagSplitAcrossKeys)
	}
	if len(destinations) == 0 || len(destinations) > MaxStealthDestinations {
		return fmt.Errorf("%w: %d destinations, want 1..%d", ErrInvalidStealthPool, len(destinations), MaxStealthDestinations)
	}
	for i, d := range destinations {
		if d.IsZero() {
			return fmt.Errorf("%w: destination %d is the zero key", ErrInvalidStealthPool, i)
		}
	}
	return nil
}

// StealthPool is a stealth pool account (619 bytes, §4):
//
//	0   8   discriminator "stpool@1"
//	8   1   bump
//	9   1   flags (bit 0 = split across keys; other bits rejected)
//	10  32  authority
//	42  256 handle storage (len ‖ bytes ‖ zero pad)
//	298 1   destination_count (1..=10)
//	299 320 destinations[10][32]
type StealthPool struct {
	Bump         uint8
	Flags        uint8
	Authority    solana.PublicKey
	Handle       []byte
	Destinations []solana.PublicKey
}

// SplitAcrossKeys reports flag bit 0.
func (p StealthPool) SplitAcrossKeys() bool { return p.Flags&StealthFlagSplitAcrossKeys != 0 }

// Validate checks the handle, the flags and the destinations.
func (p StealthPool) Validate() error {
	if err := ValidateHandle(p.Handle); err != nil {
		return err
	}
	return ValidateStealthDestinations(p.Flags, p.Destinations)
}

// Encode returns the 619-byte account data. Unused destination slots are
// zero.
func (p StealthPool) Encode() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("encode stealth pool: %w", err)
	}
	out := make([]byte, StealthPoolSize)
	copy(out, StealthPoolDiscriminator)
	out[8] = p.Bump
	out[9] = p.Flags
	copy(out[10:42], p.Authority[:])
	out[42] = byte(len(p.Handle))
	copy(out[43:298], p.Handle)
	out[298] = byte(len(p.Destinations))
	for i, d := range p.Destinations {
		copy(out[299+32*i:], d[:])
	}
	return out, nil
}

// StealthPoolInitialized reports whether data is an initialized pool as
// the program defines it: the discriminator matches, the handle length is
// 1..255 and the destination count is 1..10.
func StealthPoolInitialized(data []byte) bool {
	return len(data) >= StealthPoolSize && string(data[:8]) == StealthPoolDiscriminator &&
		data[42] != 0 && data[298] >= 1 && data[298] <= MaxStealthDestinations
}

// DecodeStealthPool parses pool account data, which must be initialized
// and valid (see StealthPool.Validate). Handle and Destinations are
// copies.
func DecodeStealthPool(data []byte) (StealthPool, error) {
	if len(data) < StealthPoolSize {
		return StealthPool{}, fmt.Errorf("decode stealth pool: %w: %d bytes, want %d", ErrInvalidStealthPool, len(data), StealthPoolSize)
	}
	if string(data[:8]) != StealthPoolDiscriminator {
		return StealthPool{}, fmt.Errorf("decode stealth pool: %w: bad discriminator", ErrInvalidStealthPool)
	}
	h, err := DecodeHandle(data[42:298])
	if err != nil {
		return StealthPool{}, fmt.Errorf("decode stealth pool: %w", err)
	}
	n := int(data[298])
	if n == 0 || n > MaxStealthDestinations {
		return StealthPool{}, fmt.Errorf("decode stealth pool: %w: %d destinations", ErrInvalidStealthPool, n)
	}
	p := StealthPool{
		Bump:         data[8],
		Flags:        data[9],
		Authority:    solana.PublicKeyFromBytes(data[10:42]),
		Handle:       append([]byte(nil), h...),
		Destinations: make([]solana.PublicKey, n),
	}
	for i := range p.Destinations {
		copy(p.Destinations[i][:], data[299+32*i:])
	}
	if err := ValidateStealthDestinations(p.Flags, p.Destinations); err != nil {
		return StealthPool{}, fmt.Errorf("decode stealth pool: %w", err)
	}
	return p, nil
}
