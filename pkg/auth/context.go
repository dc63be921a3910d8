package auth

import "context"

type walletKey struct{}

// WithVerifiedWallet returns a context that carries wallet as the
// identity of an in-process caller that has already verified the
// wallet's token (the payments API reading a private account of ferry's
// own rollup for that wallet). Only code in this process can put a value
// here: requests that arrive over the network start from a fresh context,
// so the rollup's read filter can trust it (see VerifiedWallet).
func WithVerifiedWallet(ctx context.Context, wallet string) context.Context {
	return context.WithValue(ctx, walletKey{}, wallet)
}

// VerifiedWallet is the wallet WithVerifiedWallet put in ctx, if any.
func VerifiedWallet(ctx context.Context) (string, bool) {
	w, ok := ctx.Value(walletKey{}).(string)
	return w, ok && w != ""
}
