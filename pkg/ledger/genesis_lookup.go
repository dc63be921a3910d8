package ledger

import "github.com/gagliardetto/solana-go"

// GenesisAccount returns the value key had in this ledger's genesis block,
// as this version of ferry creates genesis from the ledger's configuration
// and creation time, or nil when genesis created no such account. The
// value is rebuilt, not read from the store (history keeps no account
// writes), so an account added to genesis by a newer ferry reads as that
// newer value. Development tools use it to reset an account to where the
// chain started (devchain's resetAccount).
func (l *Ledger) GenesisAccount(key solana.PublicKey) *Account {
	for _, w := range l.genesisAccounts(l.genesisTime) {
		if w.Key == key {
			return w.Account.Clone()
		}
	}
	return nil
}
