//go:build !race

package rpcserver

// raceDetector: see race_on_test.go.
const raceDetector = false
