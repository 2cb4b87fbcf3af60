package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rpcSession is a JSON-RPC client of ServeStdio over pipes: send writes one
// line, reply waits for the response with an id.
type rpcSession struct {
	t       *testing.T
	in      *io.PipeWriter
	replies chan map[string]any
	got     map[string]map[string]any
	done    chan error
}

func serve(t *testing.T, s *Server, concurrency int) *rpcSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss := &rpcSession{t: t, in: inW, replies: make(chan map[string]any, 16), got: map[string]map[string]any{}, done: make(chan error, 1)}
	go func() { ss.done <- s.ServeStdio(t.Context(), inR, outW, concurrency, io.Discard); outW.Close() }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("server wrote a line that is not a JSON object: %q", sc.Text())
				continue
			}
			ss.replies <- m
		}
		close(ss.replies)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-ss.done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not end when its input ended")
		}
	})
	ss.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`)
	ss.reply("init", 10*time.Second)
	ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return ss
}

func (s *rpcSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// reply returns the response whose id is id ("<nil>" for a null id).
func (s *rpcSession) reply(id string, within time.Duration) map[string]any {
	s.t.Helper()
	deadline := time.After(within)
	for {
		if m, ok := s.got[id]; ok {
			return m
		}
		select {
		case m, ok := <-s.replies:
			if !ok {
				s.t.Fatalf("the server closed its output before answering %s", id)
			}
			s.got[fmt.Sprint(m["id"])] = m
		case <-deadline:
			s.t.Fatalf("no response to %s within %s", id, within)
		}
	}
}

func toolCall(id, path string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"summarize_cpu_hotspots","arguments":{"paths":[%q]}}}`, id, path)
}

// With --concurrency 1, a call cancelled while it waits behind another
// never starts and is answered CANCELLED.
func TestQueuedCallCancelled(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	// Every start is recorded; a call runs 3 s, then succeeds.
	script(t, dir, binRank, fmt.Sprintf("echo $$ >> %s\nsleep 3\n", starts)+printf(tableLines(t, 1)...))
	artifact := filepath.Join(dir, "app.cpuprofile")
	if err := os.WriteFile(artifact, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{BinDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ss := serve(t, s, 1)
	ss.send(toolCall("running", artifact))
	waitPids(t, starts, 1)
	ss.send(toolCall("queued", artifact))
	time.Sleep(200 * time.Millisecond) // the queued call reaches the server
	ss.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"queued","reason":"test"}}`)
	q := ss.reply("queued", 20*time.Second)
	res, _ := q["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	f, _ := sc["failure"].(map[string]any)
	if res["isError"] != true || f["code"] != "CANCELLED" {
		t.Fatalf("the cancelled queued call answered %v", q)
	}
	if r := ss.reply("running", 20*time.Second); r["result"].(map[string]any)["isError"] == true {
		t.Fatalf("the running call failed: %v", r)
	}
	time.Sleep(500 * time.Millisecond)
	b, _ := os.ReadFile(starts)
	if n := len(strings.Fields(string(b))); n != 1 {
		t.Errorf("%d calls started; the cancelled queued call ran anyway", n)
	}
}

// A JSON-RPC batch is answered with one Invalid Request error (id null),
// and the session goes on.
func TestBatchRejected(t *testing.T) {
	s, err := New(Options{BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ss := serve(t, s, 1)
	for _, batch := range []string{
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
		` []`,
	} {
		ss.send(batch)
		r := ss.reply("<nil>", 10*time.Second)
		delete(ss.got, "<nil>")
		e, _ := r["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32600) || !strings.Contains(fmt.Sprint(e["message"]), "batch") {
			t.Errorf("batch %s answered %v", batch, r)
		}
		if _, answered := ss.got["1"]; answered {
			t.Errorf("a request inside the batch was served: %v", ss.got["1"])
		}
	}
	ss.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if r := ss.reply("after", 10*time.Second); r["error"] != nil {
		t.Errorf("a request after a batch failed: %v", r)
	}
}
