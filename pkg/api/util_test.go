package api

import "github.com/ferry-sh/ferry/pkg/chainclient"

func chainclientTxOpts() chainclient.TransactionOptions {
	return chainclient.TransactionOptions{Commitment: chainclient.Confirmed}
}
