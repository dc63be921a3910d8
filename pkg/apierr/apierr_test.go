package apierr

import (
	"errors"
	"fmt"
	"testing"
)

func TestValidationMessage(t *testing.T) {
	e := Validation(Missing("address"), Missing("mint"))
	if e.Status != 422 || e.Message != "Missing required fields: address, mint" {
		t.Fatalf("%+v", e)
	}
	if got := string(e.Body()); got != `{"error":{"code":"VALIDATION_ERROR","message":"Missing required fields: address, mint","issues":[{"code":"invalid_type","message":"address is required","path":["address"]},{"code":"invalid_type","message":"mint is required","path":["mint"]}]}}` {
		t.Fatal(got)
	}
	e = Validation(Missing("from"), Invalid("Invalid public key", "to"))
	if e.Message != "Request validation failed" {
		t.Fatal(e.Message)
	}
}

func TestAsAndRedact(t *testing.T) {
	inner := BadRequest("MINT_NOT_FOUND", "Mint account not found")
	if got := As(fmt.Errorf("build: %w", inner)); got != inner {
		t.Fatalf("As lost the error: %v", got)
	}
	if got := As(errors.New("db exploded")); got.Status != 500 || got.Message != "Unexpected server error" {
		t.Fatalf("%+v", got)
	}
	if got := RedactURLs("dial https://rpc.example.com/?api-key=x failed (http://a.b)"); got != "dial [redacted-url] failed ([redacted-url])" {
		t.Fatal(got)
	}
	if string(inner.WithDetails(map[string]string{"mint": "m"}).Body()) != `{"error":{"code":"MINT_NOT_FOUND","message":"Mint account not found","details":{"mint":"m"}}}` {
		t.Fatal("details")
	}
}
