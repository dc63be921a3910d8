package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/ferry-sh/ferry/pkg/mcpserver"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

// TestWrappedSOLBalance reads wSOL balances with the balance tools, which
// resolve the native mints (genesis accounts of every ledger) like any
// mint, and checks they equal the REST routes. The balance is the wrapped
// amount (the token account's amount, not its lamports), as the hosted
// API reports it.
func TestWrappedSOLBalance(t *testing.T) {
	e := newEnv(t)
	aliceKey := seedKey("wsol alice")
	alice := pubOf(aliceKey)
	e.fund(alice, 0)
	// The private balance tool needs the owner's token.
	cs := e.connect("", http.Header{"Authorization": {"Bearer " + e.login(aliceKey)}})
	ata := spl.AssociatedTokenAddress(alice, spl.NativeMintID, spl.TokenProgramID)
	if _, err := e.base.Faucet().Run(t.Context(), []txwire.Instruction{
		spl.CreateAssociatedTokenAccount(e.base.Faucet().PublicKey(), alice, spl.NativeMintID, spl.TokenProgramID, true),
		spl.SystemTransfer(alice, ata, 300_000_000),
		spl.TokenSyncNative(spl.TokenProgramID, ata),
	}, aliceKey); err != nil {
		t.Fatal(err)
	}
	e.settle()

	for _, tc := range []struct {
		mint, ata string
		balance   string
	}{
		{spl.NativeMintID.String(), ata.String(), "300000000"},
		// No wSOL account under Token-2022: zero, at that program's ATA.
		{spl.NativeMint2022ID.String(), spl.AssociatedTokenAddress(alice, spl.NativeMint2022ID, spl.Token2022ProgramID).String(), "0"},
	} {
		args := map[string]any{"address": alice.String(), "mint": tc.mint}
		want := map[string]any{"address": alice.String(), "mint": tc.mint, "ata": tc.ata, "location": "base", "balance": tc.balance}
		bal := success(t, call(t, cs, mcpserver.ToolGetBalance, args), mcpserver.TextGetBalance)
		if !reflect.DeepEqual(bal, want) {
			t.Errorf("spl.getBalance %v\nwant %v", bal, want)
		}
		r := e.rest(http.MethodGet, "/v1/spl/balance", args)
		if r.Status != http.StatusOK || !reflect.DeepEqual(asObject(t, json.RawMessage(r.Body)), want) {
			t.Errorf("GET /v1/spl/balance: %d %s", r.Status, r.Body)
		}
		priv := success(t, call(t, cs, mcpserver.ToolGetPrivateBalance, args), mcpserver.TextGetPrivateBalance)
		if priv["balance"] != "0" || priv["location"] != "ephemeral" {
			t.Errorf("spl.getPrivateBalance %v", priv)
		}
	}
}
