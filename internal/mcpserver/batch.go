package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// batchReply answers a JSON-RPC batch. MCP 2025-06-18 removed batching
// (a message is one JSON-RPC object), and the server negotiates
// 2025-06-18 or later with current clients. mcp-go would read the array,
// find no method in it and answer nothing, leaving the client waiting
// forever; JSON-RPC 2.0 answers a batch it cannot process, or an empty
// one, with one Invalid Request error whose id is null.
var batchReply = func() []byte {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code":    -32600,
		"message": "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed batching); send each request as its own message",
	}})
	if err != nil {
		panic(err) // a constant value
	}
	return append(b, '\n')
}()

// batchFilter passes the client's messages to mcp-go one line at a time
// and answers each batch (a line whose first non-blank byte is '[')
// itself, so no batch reaches mcp-go.
type batchFilter struct {
	in      *bufio.Reader
	out     io.Writer
	pending []byte // the rest of the current line, not yet read
}

func (f *batchFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.in.ReadBytes('\n')
		if len(line) > 0 && isBatch(line) {
			if _, werr := f.out.Write(batchReply); werr != nil {
				return 0, werr
			}
			line = nil
		}
		f.pending = line
		if err != nil && len(line) == 0 {
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func isBatch(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}

// lockedWriter serialises whole writes: mcp-go writes each message in one
// Write under its own lock, and the batch replies share the stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
