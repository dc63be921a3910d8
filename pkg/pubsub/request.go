package pubsub

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/ferry-sh/ferry/pkg/rpcserver"
)

// request is one JSON-RPC call read from a websocket message.
type request struct {
	// id is the raw request id; nil for a notification (no "id" member),
	// which gets no response.
	id     json.RawMessage
	method string
	params rpcserver.Params
	// err is an envelope error (parse error, invalid request, params that
	// are not an array); the request is answered with it and not run.
	err *rpcserver.Error
}

var nullID = json.RawMessage("null")

// parseMessage reads a websocket message: one request or a batch (batch
// reports which). Like jsonrpc-core, invalid JSON and an empty batch are
// answered with one error whose id is null.
func parseMessage(b []byte) (reqs []request, batch bool) {
	if !json.Valid(b) {
		return []request{{id: nullID, err: rpcserver.Errorf(rpcserver.CodeParseError, "Parse error")}}, false
	}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil || len(items) == 0 {
			return []request{invalidRequest(nullID)}, false
		}
		reqs = make([]request, len(items))
		for i, it := range items {
			reqs[i] = parseRequest(it)
		}
		return reqs, true
	}
	return []request{parseRequest(b)}, false
}

func invalidRequest(id json.RawMessage) request {
	return request{id: id, err: rpcserver.Errorf(rpcserver.CodeInvalidRequest, "Invalid request")}
}

// parseRequest reads one request object (valid JSON).
func parseRequest(b json.RawMessage) request {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return invalidRequest(nullID)
	}
	var env struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return invalidRequest(nullID)
	}
	id := env.ID
	if id != nil && !validID(id) {
		return invalidRequest(nullID)
	}
	respondTo := id
	if respondTo == nil {
		respondTo = nullID
	}
	var version, method string
	if json.Unmarshal(env.JSONRPC, &version) != nil || version != "2.0" {
		return invalidRequest(respondTo)
	}
	if json.Unmarshal(env.Method, &method) != nil {
		return invalidRequest(respondTo)
	}
	req := request{id: id, method: method}
	switch p := bytes.TrimSpace(env.Params); {
	case len(p) == 0 || bytes.Equal(p, []byte("null")):
	case p[0] == '[':
		if err := json.Unmarshal(p, &req.params); err != nil {
			return invalidRequest(respondTo)
		}
	default:
		req.err = rpcserver.InvalidParams("invalid type: map, expected a sequence")
		req.id = respondTo
	}
	return req
}

// validID accepts the ids jsonrpc-core does: null, a string or an
// unsigned integer.
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	switch {
	case len(id) == 0:
		return false
	case id[0] == '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case bytes.Equal(id, []byte("null")):
		return true
	}
	_, err := strconv.ParseUint(string(id), 10, 64)
	return err == nil
}

// resultResponse encodes {"jsonrpc":"2.0","result":...,"id":...}.
func resultResponse(id json.RawMessage, result any) []byte {
	r, err := json.Marshal(result)
	if err != nil {
		// Results are plain data; this only fires on a programming error.
		return errorResponse(id, rpcserver.Errorf(rpcserver.CodeInternalError, "Internal error: %v", err))
	}
	b := make([]byte, 0, len(r)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","result":`...)
	b = append(b, r...)
	b = append(b, `,"id":`...)
	b = append(b, bytes.TrimSpace(id)...)
	return append(b, '}')
}

// errorResponse encodes {"jsonrpc":"2.0","error":{...},"id":...}.
func errorResponse(id json.RawMessage, e *rpcserver.Error) []byte {
	r, _ := json.Marshal(e)
	b := make([]byte, 0, len(r)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","error":`...)
	b = append(b, r...)
	b = append(b, `,"id":`...)
	b = append(b, bytes.TrimSpace(id)...)
	return append(b, '}')
}

// notification encodes {"jsonrpc":"2.0","method":...,"params":{"result":
// ...,"subscription":id}}, Agave's field order.
func notification(method string, id uint64, result any) []byte {
	r, err := json.Marshal(result)
	if err != nil {
		r = []byte("null")
	}
	b := make([]byte, 0, len(r)+len(method)+80)
	b = append(b, `{"jsonrpc":"2.0","method":"`...)
	b = append(b, method...)
	b = append(b, `","params":{"result":`...)
	b = append(b, r...)
	b = append(b, `,"subscription":`...)
	b = strconv.AppendUint(b, id, 10)
	return append(b, "}}"...)
}

// rpcResponse is Agave's RpcResponse as PubSub sends it: the context has
// the slot only.
type rpcResponse struct {
	Context notifyContext `json:"context"`
	Value   any           `json:"value"`
}

type notifyContext struct {
	Slot uint64 `json:"slot"`
}

func withContext(slot uint64, v any) rpcResponse {
	return rpcResponse{Context: notifyContext{Slot: slot}, Value: v}
}
