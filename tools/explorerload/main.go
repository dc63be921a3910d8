// Command explorerload measures how long the explorer page of ferry serve
// takes to load on a ledger with many transactions: it starts ferry serve
// in-process on a fresh data directory, sends -tx signed transfers from
// the demo wallet alice (so her history holds them all), then times, -runs
// times, what a browser fetches to show the overview: the HTML, its script
// and style sheet, and the page's first JSON-RPC requests (both chains'
// slot and block time, every demo wallet's balances on both layers). It
// also times the rollup, account and transaction views' JSON endpoints.
//
//	go run ./tools/explorerload -tx 100000 -runs 30
//
// Requests are sent one after the other (a browser overlaps them), so the
// figures are an upper bound for the network part of a page load.
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/ferry-sh/ferry/pkg/chainclient"
	"github.com/ferry-sh/ferry/pkg/explorer"
	"github.com/ferry-sh/ferry/pkg/keyfile"
	"github.com/ferry-sh/ferry/pkg/ledger/loadgen"
	"github.com/ferry-sh/ferry/pkg/server"
	"github.com/ferry-sh/ferry/pkg/spl"
	"github.com/ferry-sh/ferry/pkg/txwire"
)

func main() {
	txs := flag.Int("tx", 100_000, "transactions to put in the base ledger before measuring")
	runs := flag.Int("runs", 30, "page loads to time")
	chunk := flag.Int("chunk", 10_000, "transactions signed per blockhash")
	flag.Parse()
	if err := run(*txs, *runs, *chunk); err != nil {
		log.Fatal(err)
	}
}

func run(ntx, runs, chunk int) error {
	dir, err := os.MkdirTemp("", "explorerload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan *server.Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Serve(ctx, server.Options{DataDir: dir, NoSync: true,
			APIAddr: "127.0.0.1:0", RPCAddr: "127.0.0.1:0", EphemeralAddr: "127.0.0.1:0", RouterAddr: "127.0.0.1:0",
			Ready: func(i *server.Info) { ready <- i }})
	}()
	var info *server.Info
	select {
	case info = <-ready:
	case err := <-done:
		return err
	}
	rpcURL, api := info.URLs[server.KeyRPC], info.URLs[server.KeyAPI]
	alice, err := keyfile.Read(info.Demo.Wallets[0].Keypair)
	if err != nil {
		return err
	}
	from := solana.PublicKeyFromBytes(alice.Public().(ed25519.PublicKey))
	to := solana.MustPublicKeyFromBase58(info.Demo.Wallets[1].Address)
	base, err := chainclient.New(rpcURL)
	if err != nil {
		return err
	}
	start := time.Now()
	var lastSig string
	for sent := 0; sent < ntx; {
		n := min(chunk, ntx-sent)
		bh, err := base.GetLatestBlockhash(ctx, chainclient.Confirmed)
		if err != nil {
			return err
		}
		batch := make([][]byte, n)
		loadgen.Parallel(n, func(j int) {
			msg, err := txwire.Compile(from, []txwire.Instruction{spl.SystemTransfer(from, to, uint64(sent+j+1))}, bh.Hash)
			if err != nil {
				panic(err)
			}
			tx := txwire.NewUnsigned(msg)
			if err := tx.Sign(alice); err != nil {
				panic(err)
			}
			batch[j] = tx.Bytes()
		})
		res, err := loadgen.Run(ctx, batch, loadgen.Options{URL: rpcURL, SkipPreflight: true, Batch: 50, Clients: 8})
		if err != nil {
			return err
		}
		if res.Confirmed != n {
			return fmt.Errorf("populate: %d of %d confirmed (%s)", res.Confirmed, n, res.FirstError)
		}
		tx, _ := txwire.Decode(batch[n-1])
		lastSig = tx.Signatures[0].String()
		sent += n
	}
	var count uint64
	if err := base.Call(ctx, "getTransactionCount", []any{map[string]string{"commitment": "confirmed"}}, &count); err != nil {
		return err
	}
	fmt.Printf("populated: %d transfers in %.1f s; the base ledger counts %d transactions\n", ntx, time.Since(start).Seconds(), count)

	hc := &http.Client{}
	fetch := func(method, url, body string) error {
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, url, r)
		if err != nil {
			return err
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || bytes.Contains(b, []byte(`"error"`)) && !bytes.Contains(b, []byte(`-32090`)) {
			return fmt.Errorf("%s %s: %d %.200s", method, url, resp.StatusCode, b)
		}
		return nil
	}
	batch := func(calls ...string) string { return "[" + strings.Join(calls, ",") + "]" }
	call := func(method string, params ...any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		return string(b)
	}
	conf := map[string]string{"commitment": "confirmed"}
	parsed := map[string]string{"encoding": "jsonParsed", "commitment": "confirmed"}
	pageLoad := func() error {
		for _, p := range []string{explorer.Path, explorer.PathScript, explorer.PathStyle} {
			if err := fetch("GET", api+p, ""); err != nil {
				return err
			}
		}
		for _, node := range []string{rpcURL, info.URLs[server.KeyEphemeral]} {
			if err := fetch("POST", node, call("getSlot", conf)); err != nil {
				return err
			}
			if err := fetch("POST", node, call("getBlockTime", 1)); err != nil {
				return err
			}
		}
		for _, w := range info.Demo.Wallets {
			tok := func(p solana.PublicKey) string {
				return call("getTokenAccountsByOwner", w.Address, map[string]string{"programId": p.String()}, parsed)
			}
			calls := []string{call("getBalance", w.Address, conf), tok(spl.TokenProgramID), tok(spl.Token2022ProgramID)}
			if err := fetch("POST", rpcURL, batch(calls...)); err != nil {
				return err
			}
			ata := spl.AssociatedTokenAddress(solana.MustPublicKeyFromBase58(w.Address), solana.MustPublicKeyFromBase58(info.Demo.Mint), spl.TokenProgramID)
			if err := fetch("POST", info.URLs[server.KeyEphemeral], batch(append(calls, call("getAccountInfo", ata.String(), parsed))...)); err != nil {
				return err
			}
		}
		return nil
	}
	measure := func(name string, fn func() error) error {
		var ds []time.Duration
		for i := 0; i < runs; i++ {
			t0 := time.Now()
			if err := fn(); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			ds = append(ds, time.Since(t0))
		}
		slices.Sort(ds)
		ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }
		fmt.Printf("%-34s runs %d  min %s ms  median %s ms  p95 %s ms  max %s ms\n", name, runs,
			ms(ds[0]), ms(ds[len(ds)/2]), ms(ds[min(len(ds)-1, len(ds)*95/100)]), ms(ds[len(ds)-1]))
		return nil
	}
	if err := measure("overview (HTML, assets, first RPC)", pageLoad); err != nil {
		return err
	}
	for _, v := range []struct{ name, path string }{
		{"rollup view JSON", explorer.PathRollup},
		{"account view JSON (alice)", explorer.PathAccount + "?address=" + from.String()},
		{"transaction view JSON", explorer.PathTx + "?signature=" + lastSig},
	} {
		if err := measure(v.name, func() error { return fetch("GET", api+v.path, "") }); err != nil {
			return err
		}
	}
	cancel()
	return <-done
}
