package openapicheck

import (
	"encoding/json"
	"strings"
	"testing"
)

func doc(mutate func(map[string]any)) []byte {
	d := map[string]any{
		"openapi": "3.1.0", "info": map[string]any{"title": "t", "version": "1"},
		"tags": []any{map[string]any{"name": "A"}},
		"paths": map[string]any{"/x": map[string]any{"post": map[string]any{
			"operationId": "x", "tags": []any{"A"},
			"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/In"}, "example": map[string]any{"n": 1}}}},
			"responses": map[string]any{
				"200": map[string]any{"description": "ok", "content": map[string]any{"application/json": map[string]any{
					"schema": map[string]any{"type": "object"}, "example": map[string]any{}}}},
				"400": map[string]any{"description": "bad", "content": map[string]any{"application/json": map[string]any{
					"schema": map[string]any{"type": "object"}, "example": map[string]any{}}}},
			}}}},
		"components": map[string]any{"schemas": map[string]any{"In": map[string]any{"type": "object", "required": []any{"n"},
			"properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1}}}}},
	}
	if mutate != nil {
		mutate(d)
	}
	b, _ := json.Marshal(d)
	return b
}

func op(d map[string]any) map[string]any {
	return d["paths"].(map[string]any)["/x"].(map[string]any)["post"].(map[string]any)
}

func TestCheck(t *testing.T) {
	if errs := Check(doc(nil)); errs != nil {
		t.Fatal(errs)
	}
	for name, c := range map[string]struct {
		mutate func(map[string]any)
		want   string
	}{
		"version":      {func(d map[string]any) { d["openapi"] = "3.0.3" }, "not 3.1"},
		"dangling ref": {func(d map[string]any) { delete(d["components"].(map[string]any)["schemas"].(map[string]any), "In") }, "does not resolve"},
		"bad example": {func(d map[string]any) {
			op(d)["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["example"] = map[string]any{"n": 0}
		}, "0 < 1"},
		"missing field": {func(d map[string]any) {
			op(d)["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["example"] = map[string]any{}
		}, "required n missing"},
		"no example": {func(d map[string]any) {
			delete(op(d)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any), "example")
		}, "no example"},
		"no errors":   {func(d map[string]any) { delete(op(d)["responses"].(map[string]any), "400") }, "no error responses"},
		"unknown tag": {func(d map[string]any) { op(d)["tags"] = []any{"B"} }, "not declared"},
	} {
		errs := Check(doc(c.mutate))
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("%s: %v", name, errs)
		}
	}
}
