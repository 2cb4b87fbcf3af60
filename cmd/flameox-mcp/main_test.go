package main

// These tests run the built flameox-mcp as a real MCP stdio server, driven
// by mcp-go's client, with the real flameox-rank and flameox-decode beside
// it and CPU profiles written by the real node during the test.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/mcpserver"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/wire"
)

var (
	binDir  string // every flameox command, built for this test run
	repoDir string
	scratch string
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		var err error
		scratch, err = os.MkdirTemp("", "flameox-mcp-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(scratch)
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "go env GOMOD:", err)
			return 1
		}
		repoDir = filepath.Dir(strings.TrimSpace(string(out)))
		binDir = filepath.Join(scratch, "bin")
		build := exec.Command("go", "build", "-o", binDir+"/", "./cmd/...")
		build.Dir = repoDir
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build ./cmd/...: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}())
}

// hotJS spends nearly all its time in hotLoop, so hotLoop must rank first
// by self weight.
const hotJS = `function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) * Math.sin(i); } return s; }
function cold() { return 1; }
const end = Date.now() + 600; let x = 0;
while (Date.now() < end) { x += hotLoop(1e5); }
console.log(cold(), x > 0);
`

var (
	profileOnce sync.Once
	profilePath string
	profileErr  error
)

func needNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found in PATH: the CPU profiles of these tests are written by real node (CI installs Node 20)")
	}
	return node
}

func hotScript(t testing.TB) string {
	p := filepath.Join(scratch, "hot.js")
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, []byte(hotJS), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// nodeProfile is a .cpuprofile written by `node --cpu-prof` during this run.
func nodeProfile(t testing.TB) string {
	t.Helper()
	node := needNode(t)
	profileOnce.Do(func() {
		dir := filepath.Join(scratch, "prof")
		out, err := exec.Command(node, "--cpu-prof", "--cpu-prof-dir="+dir, hotScript(t)).CombinedOutput()
		if err != nil {
			profileErr = fmt.Errorf("node --cpu-prof: %v\n%s", err, out)
			return
		}
		m, _ := filepath.Glob(filepath.Join(dir, "*.cpuprofile"))
		if len(m) != 1 {
			profileErr = fmt.Errorf("node wrote %d profiles", len(m))
			return
		}
		profilePath = m[0]
	})
	if profileErr != nil {
		t.Fatal(profileErr)
	}
	return profilePath
}

func connect(t *testing.T, bin string, env ...string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(bin, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		ClientInfo:      mcp.Implementation{Name: "flameox-mcp-test", Version: "1"},
	}}); err != nil {
		t.Fatal(err)
	}
	return c
}

type reply struct {
	res *mcp.CallToolResult
	sc  evidence.Object
}

func call(t *testing.T, ctx context.Context, c *client.Client, tool string, args map[string]any) (reply, error) {
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		return reply{}, err
	}
	v, err := evidence.ParseValue(res.RawStructuredContent, 64)
	if err != nil {
		return reply{}, fmt.Errorf("structuredContent: %w", err)
	}
	sc := v.(evidence.Object)
	if sc["ok"] == res.IsError {
		return reply{}, fmt.Errorf("ok=%v disagrees with isError=%v", sc["ok"], res.IsError)
	}
	return reply{res, sc}, nil
}

func mustCall(t *testing.T, c *client.Client, tool string, args map[string]any) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	r, err := call(t, ctx, c, tool, args)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r reply) failure(t *testing.T) evidence.Object {
	t.Helper()
	f, ok := r.sc["failure"].(evidence.Object)
	if !r.res.IsError || !ok {
		t.Fatalf("want isError with a failure, got %v", r.sc)
	}
	return f
}

// rows are the result table's rows as objects: a compact table's value
// arrays keyed by its columns, a full one's as they are.
func (r reply) rows(t *testing.T) []any {
	t.Helper()
	return rowObjects(t, r.table(t))
}

func rowObjects(t *testing.T, tab evidence.Object) []any {
	t.Helper()
	rows := tab["rows"].([]any)
	cols, compact := tab["columns"].([]any)
	if !compact {
		return rows
	}
	out := make([]any, len(rows))
	for i, r := range rows {
		cells := r.([]any)
		if len(cells) != len(cols) {
			t.Fatalf("row %d has %d cells for %d columns", i, len(cells), len(cols))
		}
		o := evidence.Object{}
		for j, c := range cols {
			o[c.(string)] = cells[j]
		}
		out[i] = o
	}
	return out
}

// table is the one result table of a call.
func (r reply) table(t *testing.T) evidence.Object {
	t.Helper()
	if r.res.IsError {
		t.Fatalf("unexpected failure: %v", r.sc["failure"])
	}
	tables := r.sc["tables"].([]any)
	if len(tables) != 1 {
		t.Fatalf("want one result table, got %d", len(tables))
	}
	return tables[0].(evidence.Object)
}

func field(f evidence.Object) any { return f["location"].(evidence.Object)["field"] }

func stagesRan(f evidence.Object) bool {
	_, ran := f["details"].(evidence.Object)["stages"]
	return ran
}

func TestToolsList(t *testing.T) {
	c := connect(t, filepath.Join(binDir, "flameox-mcp"))
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
	}
	for _, op := range registry.Operations() {
		want = append(want, op.Name)
	}
	for _, p := range registry.Providers() {
		want = append(want, mcpserver.CaptureToolName(p.Name))
	}
	want = append(want, mcpserver.ServiceTools()...)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v\nwant every operation and provider: %v", got, want)
	}
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		v, err := evidence.ParseValue(b, 64)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if v.(evidence.Object)["inputSchema"].(evidence.Object)["additionalProperties"] != false {
			t.Errorf("%s: the input schema admits unknown arguments", tool.Name)
		}
	}
}

// The server is a thin composition: its rows are exactly flameox-rank's.
func TestHotspotsOnNodeProfile(t *testing.T) {
	prof := nodeProfile(t)
	c := connect(t, filepath.Join(binDir, "flameox-mcp"))
	r := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "top": 5, "detail": "full"})
	rows := r.rows(t)
	if len(rows) == 0 || rows[0].(evidence.Object)["function"] != "hotLoop" {
		t.Fatalf("top row = %v, want hotLoop (the profile's known hot function)", rows)
	}
	res := r.table(t)
	if sm := res["summary"].(evidence.Object); fmt.Sprint(sm["rows_emitted"]) != strconv.Itoa(len(rows)) || len(rows) != 5 {
		t.Errorf("summary %v for %d rows", sm, len(rows))
	}
	arts := r.sc["artifacts"].([]any)
	if len(arts) != 1 || arts[0].(evidence.Object)["path"] != prof || arts[0].(evidence.Object)["format"] != "v8-cpuprofile" {
		t.Errorf("artifacts = %v", arts)
	}
	if r.sc["capture"] != nil {
		t.Errorf("an analysis has no capture block: %v", r.sc["capture"])
	}

	out, err := exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "jsonl", "--top", "5", prof).Output()
	if err != nil {
		t.Fatal(err)
	}
	var cli []any
	rd := wire.NewReader(bytes.NewReader(out))
	for raw, err := rd.Next(); err == nil; raw, err = rd.Next() {
		if raw.Kind() == evidence.KindRow {
			cli = append(cli, raw.Obj["values"])
		}
	}
	a, _ := evidence.Canonical(rows)
	b, _ := evidence.Canonical(cli)
	if !bytes.Equal(a, b) {
		t.Errorf("MCP rows differ from flameox-rank's:\n%s\n%s", a, b)
	}

	// The text content is the same evidence as canonical JSONL.
	text := r.res.Content[0].(mcp.TextContent).Text
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		v, err := evidence.ParseValue([]byte(l), 64)
		if err != nil || v.(evidence.Object)["schema"] != evidence.Schema {
			t.Fatalf("text line %q is not a flameox/1 block", l)
		}
		if v.(evidence.Object)["kind"] == evidence.KindRow {
			n++
		}
	}
	if n != len(rows) {
		t.Errorf("text holds %d rows, structured content %d", n, len(rows))
	}
}

func TestRejectedArguments(t *testing.T) {
	prof := nodeProfile(t)
	c := connect(t, filepath.Join(binDir, "flameox-mcp"))
	t.Run("unknown argument", func(t *testing.T) {
		f := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "bogus": 1}).failure(t)
		if f["code"] != "INVALID_ARGUMENT" || field(f) != "bogus" || stagesRan(f) {
			t.Errorf("failure = %v", f)
		}
	})
	// A V8 profile has a native fixed weight. Named explicitly, the format
	// is checked in the server before anything runs; detected, flameox-rank
	// refuses before decoding anything.
	t.Run("metric on V8, explicit format", func(t *testing.T) {
		f := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "format": "v8-cpuprofile", "metric": "self"}).failure(t)
		if f["code"] != "INVALID_ARGUMENT" || field(f) != "metric" || stagesRan(f) {
			t.Errorf("failure = %v", f)
		}
	})
	t.Run("metric on V8, detected format", func(t *testing.T) {
		f := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "metric": "self"}).failure(t)
		pe := f["details"].(evidence.Object)["partial_evidence"].(evidence.Object)
		if f["code"] != "INVALID_ARGUMENT" || field(f) != "metric" || len(pe["tables"].([]any)) != 0 || len(pe["artifacts"].([]any)) != 0 {
			t.Errorf("failure = %v", f)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		missing := filepath.Join(scratch, "absent.cpuprofile")
		f := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{missing}}).failure(t)
		if f["code"] != "IO_FAILURE" || f["location"].(evidence.Object)["path"] != missing {
			t.Errorf("failure = %v", f)
		}
	})
	t.Run("parser limit", func(t *testing.T) {
		f := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "limits": map[string]any{"max_nodes": 1}}).failure(t)
		pe := f["details"].(evidence.Object)["partial_evidence"].(evidence.Object)
		if f["code"] != "LIMIT_EXCEEDED" || len(pe["artifacts"].([]any)) != 1 {
			t.Errorf("failure = %v", f)
		}
	})
}

// hangBin is a bin dir (served with FLAMEOX_BIN_DIR) whose flameox-rank hangs (with a child in its group
// and a grandchild in a session of its own) when a path contains "hang",
// and is the real flameox-rank otherwise.
func hangBin(t *testing.T) (dir, pidFile string) {
	t.Helper()
	dir = t.TempDir()
	pidFile = filepath.Join(dir, "pids")
	for _, b := range []string{"flameox-mcp", "flameox-decode"} {
		if err := os.Symlink(filepath.Join(binDir, b), filepath.Join(dir, b)); err != nil {
			t.Fatal(err)
		}
	}
	body := fmt.Sprintf(`#!/bin/sh
case "$*" in
*hang*)
	sleep 300 & echo $! >> %[1]s
	setsid sleep 301 & echo $! >> %[1]s
	echo $$ >> %[1]s
	wait ;;
*) exec %[2]s "$@" ;;
esac
`, pidFile, filepath.Join(binDir, "flameox-rank"))
	if err := os.WriteFile(filepath.Join(dir, "flameox-rank"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, pidFile
}

func waitPids(t *testing.T, pidFile string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidFile)
		if f := strings.Fields(string(b)); len(f) >= n {
			var pids []int
			for _, s := range f {
				p, _ := strconv.Atoi(s)
				pids = append(pids, p)
			}
			return pids
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the workload did not start within 60s")
	return nil
}

// alive reports whether pid runs; a zombie has ended.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// gone waits (bounded) for processes to end: the server answers a
// cancelled request at once, and its sweep may still be finishing.
func gone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range pids {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(p) {
			t.Errorf("process %d outlived its cancelled request", p)
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

func TestCancellationEndsEveryProcess(t *testing.T) {
	dir, pidFile := hangBin(t)
	t.Run("notifications/cancelled", func(t *testing.T) {
		_ = os.Remove(pidFile)
		c := connect(t, filepath.Join(dir, "flameox-mcp"), "FLAMEOX_BIN_DIR="+dir)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := call(t, ctx, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{"/hang.cpuprofile"}})
			errc <- err
		}()
		pids := waitPids(t, pidFile, 3)
		cancel() // the client sends notifications/cancelled
		if err := <-errc; err == nil {
			t.Error("the cancelled call returned a result")
		}
		gone(t, pids)
		// The server still serves.
		f := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{"/nope.cpuprofile"}}).failure(t)
		if f["code"] != "IO_FAILURE" {
			t.Errorf("after a cancellation: %v", f)
		}
	})
	t.Run("client disconnects", func(t *testing.T) {
		_ = os.Remove(pidFile)
		c := connect(t, filepath.Join(dir, "flameox-mcp"), "FLAMEOX_BIN_DIR="+dir)
		go func() {
			_, _ = call(t, t.Context(), c, "summarize_cpu_hotspots", map[string]any{"paths": []string{"/hang.cpuprofile"}})
		}()
		pids := waitPids(t, pidFile, 3)
		_ = c.Close()
		gone(t, pids)
	})
}

func TestConcurrentRequests(t *testing.T) {
	prof := nodeProfile(t)
	dir, pidFile := hangBin(t)
	c := connect(t, filepath.Join(dir, "flameox-mcp"), "FLAMEOX_BIN_DIR="+dir)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = call(t, ctx, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{"/hang.cpuprofile"}})
	}()
	pids := waitPids(t, pidFile, 3)
	rows := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "top": 1}).rows(t)
	if rows[0].(evidence.Object)["function"] != "hotLoop" {
		t.Errorf("top row = %v", rows[0])
	}
	select {
	case <-done:
		t.Fatal("the hanging request ended before it was cancelled")
	default:
	}
	cancel()
	<-done
	gone(t, pids)
}

// SIGTERM to the server cancels the calls in flight, ends their processes
// and stops the server.
func TestServerShutdownEndsCalls(t *testing.T) {
	dir, pidFile := hangBin(t)
	srv := exec.Command(filepath.Join(dir, "flameox-mcp"))
	srv.Env = append(os.Environ(), "FLAMEOX_BIN_DIR="+dir)
	stdin, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	srv.Stdout = &stdout
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"summarize_cpu_hotspots","arguments":{"paths":["/hang.cpuprofile"]}}}`,
	} {
		if _, err := fmt.Fprintln(stdin, msg); err != nil {
			t.Fatal(err)
		}
	}
	pids := waitPids(t, pidFile, 3)
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(); err != nil {
		t.Errorf("server exit after SIGTERM: %v", err)
	}
	gone(t, pids)
	if !strings.Contains(stdout.String(), `"code":"CANCELLED"`) {
		t.Errorf("the call in flight was not answered CANCELLED:\n%s", stdout.String())
	}
}

func TestCommandLine(t *testing.T) {
	bin := filepath.Join(binDir, "flameox-mcp")
	out, err := exec.Command(bin, "--help").Output()
	if err != nil || !bytes.Contains(out, []byte(`"mcpServers"`)) {
		t.Errorf("--help lacks the example client configuration: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "--list-tools").Output()
	if err != nil {
		t.Fatal(err)
	}
	var listed struct{ Tools []mcp.Tool }
	if err := json.Unmarshal(out, &listed); err != nil || len(listed.Tools) != len(registry.Operations())+len(registry.Providers())+len(mcpserver.ServiceTools()) {
		t.Errorf("--list-tools printed %d tools (%v)", len(listed.Tools), err)
	}
	err = exec.Command(bin, "--concurrency", "0").Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != evidence.ExitCode(evidence.CodeInvalidArgument) {
		t.Errorf("--concurrency 0: %v", err)
	}
}

// BenchmarkHotspotsCall measures one summarize_cpu_hotspots call over stdio,
// including flameox-rank's start; BenchmarkRankDirect is that command alone.
func BenchmarkHotspotsCall(b *testing.B) {
	prof := nodeProfile(b)
	c, err := client.NewStdioMCPClient(filepath.Join(binDir, "flameox-mcp"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(b.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}}); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(prof)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(b.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{
			Name: "summarize_cpu_hotspots", Arguments: map[string]any{"paths": []string{prof}}}})
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
	}
}

func BenchmarkRankDirect(b *testing.B) {
	prof := nodeProfile(b)
	st, _ := os.Stat(prof)
	b.SetBytes(st.Size())
	for b.Loop() {
		if err := exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "jsonl", prof).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// A failure reported through MCP names arguments as MCP does: the
// composed flameox-rank keeps "argument format", not its own flag.
func TestFailureNamesMCPArguments(t *testing.T) {
	blob := filepath.Join(t.TempDir(), "blob.bin")
	if err := os.WriteFile(blob, []byte{0, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, filepath.Join(binDir, "flameox-mcp"))
	f := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{blob}}).failure(t)
	msg := fmt.Sprint(f["message"])
	if f["code"] != "UNSUPPORTED_FORMAT" || !strings.Contains(msg, "argument format") || strings.Contains(msg, "--") {
		t.Errorf("failure %v: want UNSUPPORTED_FORMAT naming the MCP argument format, no flag", f)
	}
}
