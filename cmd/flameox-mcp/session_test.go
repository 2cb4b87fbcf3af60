package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/mcpserver"
	"github.com/flameox/flameox/internal/registry"
)

// Size budget of tools/list: every tool of today, with room for the
// operations and providers still to come. Every family of the plan has
// landed but two parts: summarize_inference (one operation, the inference
// family) and the providers nsight-systems, rocprofv3, xctrace and nvbench,
// counted as five to leave room for one more. A family beyond the plan
// raises these and must still fit.
const (
	toolsListBound  = 64 << 10
	moreOperations  = 1
	moreProviders   = 5
	hotspotTextSize = 4 << 10
)

// rawToolsList is the tools/list response exactly as the server writes it.
func rawToolsList(t *testing.T) []byte {
	t.Helper()
	srv := exec.Command(filepath.Join(binDir, "flameox-mcp"))
	stdin, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = srv.Wait() }()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		if _, err := fmt.Fprintln(stdin, m); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"jsonrpc":"2.0","id":2,`) {
			return append([]byte(nil), sc.Bytes()...)
		}
	}
	t.Fatalf("no tools/list response: %v", sc.Err())
	return nil
}

// The sizes an agent pays for, printed: tools/list in total and per tool,
// its projection with the tools still to come, and the text of a top-20
// hotspot result. No timing.
func TestSizes(t *testing.T) {
	raw := rawToolsList(t)
	var resp struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	want := len(registry.Operations()) + len(registry.Providers()) + len(mcpserver.ServiceTools())
	if len(resp.Result.Tools) != want {
		t.Fatalf("tools/list has %d tools, want operations (%d) + providers (%d) + service tools (%d)",
			len(resp.Result.Tools), len(registry.Operations()), len(registry.Providers()), len(mcpserver.ServiceTools()))
	}
	type sized struct {
		name string
		n    int
	}
	var sizes []sized
	var analysis, capture []int
	for _, r := range resp.Result.Tools {
		var tool struct{ Name string }
		_ = json.Unmarshal(r, &tool)
		sizes = append(sizes, sized{tool.Name, len(r)})
		switch {
		case strings.HasPrefix(tool.Name, "capture_"):
			capture = append(capture, len(r))
		case !slices.Contains(mcpserver.ServiceTools(), tool.Name):
			analysis = append(analysis, len(r))
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i].n > sizes[j].n })
	for _, s := range sizes {
		t.Logf("%6d bytes  %s", s.n, s.name)
	}
	mean := func(xs []int) int {
		sum := 0
		for _, x := range xs {
			sum += x
		}
		return sum / max(1, len(xs))
	}
	projected := len(raw) + moreOperations*mean(analysis) + moreProviders*mean(capture)
	t.Logf("tools/list: %d bytes for %d tools (analysis mean %d, capture mean %d); with %d more operations and %d more providers at those means: %d bytes (bound %d)",
		len(raw), len(sizes), mean(analysis), mean(capture), moreOperations, moreProviders, projected, toolsListBound)
	if len(raw) > toolsListBound || projected > toolsListBound {
		t.Errorf("tools/list is %d bytes, %d projected; the bound is %d", len(raw), projected, toolsListBound)
	}

	// A top-20 hotspot result on a profile with more than 20 functions.
	prof := filepath.Join(repoDir, "testdata", "v8", "recursive-main.cpuprofile")
	c := connect(t, filepath.Join(binDir, "flameox-mcp"))
	r := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "top": 20})
	if n := len(r.rows(t)); n != 20 {
		t.Fatalf("%d rows, want 20", n)
	}
	text := 0
	for _, ct := range r.res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			text += len(tc.Text)
		}
	}
	full := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "top": 20, "detail": "full"})
	fullText := 0
	for _, ct := range full.res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			fullText += len(tc.Text)
		}
	}
	t.Logf("top-20 hotspots: text %d bytes, structuredContent %d bytes (detail full: text %d, structuredContent %d)",
		text, len(r.res.RawStructuredContent), fullText, len(full.res.RawStructuredContent))
	if text > hotspotTextSize {
		t.Errorf("top-20 hotspot text is %d bytes; the bound is %d", text, hotspotTextSize)
	}
	// The full digest appears once, in the artifact list; rows carry the
	// short id.
	id := r.sc["artifacts"].([]any)[0].(evidence.Object)["artifact_id"].(string)
	if n := strings.Count(string(r.res.RawStructuredContent), strings.TrimPrefix(id, "sha256:")); n != 1 {
		t.Errorf("the full artifact digest appears %d times in the compact result", n)
	}
	short := r.sc["artifacts"].([]any)[0].(evidence.Object)["id"]
	if got := r.rows(t)[0].(evidence.Object)["artifact_id"]; got != short {
		t.Errorf("row artifact_id %v, want the short id %v", got, short)
	}
	lines := 0
	for _, l := range strings.Split(r.res.Content[0].(mcp.TextContent).Text, "\n") {
		if f := strings.Split(l, "\t"); len(f) > 3 {
			if _, err := strconv.Atoi(f[0]); err == nil {
				lines++
			}
		}
	}
	if lines != 20 {
		t.Errorf("the compact text has %d row lines, want 20", lines)
	}
}

// countingScript is a node workload that appends one byte to runs each
// time it runs, and spends its time in hotLoop.
func countingScript(t *testing.T, runs string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "count.js")
	body := fmt.Sprintf("require('fs').appendFileSync(%q, 'x');\n%s", runs, hotJS)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A capture whose analysis fails keeps a handle: reanalyze it with a
// corrected limit, preserve it, read the bundle as a resource, reanalyze
// the bundle; the workload runs once.
func TestHandleReanalyzePreserveResource(t *testing.T) {
	needNode(t)
	runs := filepath.Join(t.TempDir(), "runs")
	scratchRoot := t.TempDir()
	store := filepath.Join(t.TempDir(), "store")
	c := connect(t, filepath.Join(binDir, "flameox-mcp"), "FLAMEOX_SCRATCH="+scratchRoot)
	fr := mustCall(t, c, "capture_node_cpu_profile", map[string]any{
		"argv": []string{"node", countingScript(t, runs)}, "analysis": map[string]any{"limits": map[string]any{"max_nodes": 1}}})
	f := fr.failure(t)
	details := f["details"].(evidence.Object)
	h, _ := details["handle"].(string)
	if f["code"] != "LIMIT_EXCEEDED" || h == "" || details["partial_evidence"].(evidence.Object)["capture"] == nil {
		t.Fatalf("failure = %v", f)
	}
	if r := f["retry"].(evidence.Object); r["tool"] != "reanalyze" || !strings.Contains(fmt.Sprint(r["action"]), "analysis.limits.max_nodes above 1") {
		t.Errorf("retry = %v", r)
	}
	if hv := fr.sc["handle"].(evidence.Object); hv["id"] != h || !strings.Contains(fmt.Sprint(hv["expires"]), "session ends") {
		t.Errorf("handle = %v", hv)
	}

	rr := mustCall(t, c, "reanalyze", map[string]any{"handle": h, "analysis": map[string]any{"limits": map[string]any{"max_nodes": 1000000}, "top": 3}})
	if rows := rr.rows(t); len(rows) != 3 || rows[0].(evidence.Object)["function"] != "hotLoop" {
		t.Fatalf("reanalyzed rows = %v", rows)
	}
	edges := mustCall(t, c, "reanalyze", map[string]any{"handle": h, "analysis": map[string]any{"operation": "summarize_cpu_caller_edges", "top": 2}})
	if edges.sc["operation"] != "summarize_cpu_caller_edges" || len(edges.rows(t)) != 2 {
		t.Errorf("reanalysis with another operation: %v", edges.sc)
	}
	bad := mustCall(t, c, "reanalyze", map[string]any{"handle": h, "analysis": map[string]any{"metric": "self"}}).failure(t)
	if bad["code"] != "INVALID_ARGUMENT" || field(bad) != "analysis.metric" {
		t.Errorf("metric on a V8 handle: %v", bad)
	}

	pr := mustCall(t, c, "preserve", map[string]any{"handle": h, "store": store})
	if pr.res.IsError {
		t.Fatalf("preserve: %v", pr.sc["failure"])
	}
	b := pr.sc["bundles"].([]any)[0].(evidence.Object)
	uri := b["uri"].(string)
	linked := false
	for _, ct := range pr.res.Content {
		if l, ok := ct.(mcp.ResourceLink); ok && l.URI == uri {
			linked = true
		}
	}
	if !linked {
		t.Errorf("preserve result has no resource link to %s: %v", uri, pr.res.Content)
	}

	list, err := c.ListResources(t.Context(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != uri {
		t.Errorf("resources/list = %v, want %s", list.Resources, uri)
	}
	tmpl, err := c.ListResourceTemplates(t.Context(), mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tmpl.ResourceTemplates) != 1 {
		t.Fatalf("resources/templates/list = %v, %v", tmpl, err)
	}
	read, err := c.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		t.Fatal(err)
	}
	text := read.Contents[0].(mcp.TextResourceContents).Text
	checkSafeProjection(t, text, scratchRoot, store)
	v, _ := evidence.ParseValue([]byte(text), 64)
	proj := v.(evidence.Object)
	if caps := proj["captures"].([]any); len(caps) != 1 || caps[0].(evidence.Object)["outcome"] != "completed" {
		t.Errorf("captures = %v", proj["captures"])
	}
	receipts := proj["limit_receipts"].([]any)
	if len(receipts) != 1 || receipts[0].(evidence.Object)["limit"].(evidence.Object)["name"] != "max_nodes" {
		t.Errorf("limit receipts = %v, want the failed analysis's max_nodes", receipts)
	}
	if m := proj["members"].([]any); len(m) == 0 || m[0].(evidence.Object)["sha256"] == nil {
		t.Errorf("members = %v", m)
	}

	rb := mustCall(t, c, "reanalyze", map[string]any{"bundle": b["bundle_id"], "analysis": map[string]any{"top": 1}})
	if rows := rb.rows(t); rows[0].(evidence.Object)["function"] != "hotLoop" {
		t.Errorf("bundle reanalysis rows = %v", rows)
	}
	if n, _ := os.ReadFile(runs); string(n) != "x" {
		t.Errorf("the workload ran %d times, want once", len(n))
	}
	gone := mustCall(t, c, "reanalyze", map[string]any{"handle": "h-0000000000000000"}).failure(t)
	if gone["code"] != "INVALID_ARGUMENT" || field(gone) != "handle" || gone["retry"] == nil {
		t.Errorf("unknown handle: %v", gone)
	}
	_ = c.Close()
	waitEmpty(t, scratchRoot)
}

// checkSafeProjection fails when a resource's text holds a host path, the
// workload's argv or environment, or console text.
func checkSafeProjection(t *testing.T, text string, roots ...string) {
	t.Helper()
	for _, bad := range append(roots, `"argv"`, `"command"`, `"cwd"`, `"scratch"`, `"path"`, `"env"`, `"text"`, `"message"`, "node ", os.TempDir()+"/") {
		if strings.Contains(text, bad) {
			t.Errorf("the resource projection holds %q:\n%s", bad, text)
		}
	}
}

// waitEmpty waits (bounded) until dir holds nothing: the server removes
// its session scratch when the client goes.
func waitEmpty(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ents, _ := os.ReadDir(dir)
		if len(ents) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var names []string
			_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { names = append(names, p); return nil })
			t.Fatalf("scratch left behind in %s: %v", dir, names)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// 16 captures at once, 4 of them cancelled mid-capture: the other 12
// complete, each with its handle; the cancelled ones' processes and
// scratch are gone at once, and the session's when the client goes.
func TestConcurrentCapturesWithCancellation(t *testing.T) {
	scratchRoot := t.TempDir()
	c, err := client.NewStdioMCPClient(filepath.Join(binDir, "flameox-mcp"), []string{"FLAMEOX_SCRATCH=" + scratchRoot}, "--concurrency", "16", "--grace", "2s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancelInit := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancelInit()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	pidDir := t.TempDir()
	type outcome struct {
		i   int
		r   reply
		err error
	}
	results := make(chan outcome, 16)
	cancels := map[int]context.CancelFunc{}
	var mu sync.Mutex
	for i := range 16 {
		cctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
		defer cancel()
		argv := []string{"sh", "-c", fmt.Sprintf("echo call %d; sleep 1", i)}
		if i%4 == 0 {
			// A hanging workload with a child; its pids are recorded.
			argv = []string{"sh", "-c", fmt.Sprintf("sleep 300 & echo $! >> %[1]s/%[2]d; echo $$ >> %[1]s/%[2]d; wait", pidDir, i)}
			mu.Lock()
			cancels[i] = cancel
			mu.Unlock()
		}
		go func() {
			r, err := call(t, cctx, c, "capture_process", map[string]any{"argv": argv, "analysis": map[string]any{"lines": 5}})
			results <- outcome{i, r, err}
		}()
	}
	var pids []int
	for i := range cancels {
		pids = append(pids, waitPids(t, filepath.Join(pidDir, strconv.Itoa(i)), 2)...)
	}
	for _, cancel := range cancels {
		cancel()
	}
	handles := map[string]bool{}
	for range 16 {
		o := <-results
		_, cancelled := cancels[o.i]
		switch {
		case cancelled:
			if o.err == nil {
				t.Errorf("call %d was cancelled but returned a result", o.i)
			}
		case o.err != nil:
			t.Errorf("call %d: %v", o.i, o.err)
		case o.r.res.IsError:
			t.Errorf("call %d failed: %v", o.i, o.r.sc["failure"])
		default:
			h := o.r.sc["handle"].(evidence.Object)["id"].(string)
			handles[h] = true
			text := fmt.Sprint(o.r.res.Content)
			if !strings.Contains(text, fmt.Sprintf("call %d", o.i)) {
				t.Errorf("call %d: its own output is not in its result: %s", o.i, text)
			}
		}
	}
	if len(handles) != 12 {
		t.Errorf("%d distinct handles for 12 completed captures", len(handles))
	}
	gone(t, pids)
	// The cancelled requests' scratch is gone; the completed ones' holds
	// their handles.
	sessions, _ := filepath.Glob(filepath.Join(scratchRoot, ".mcp-session-*"))
	if len(sessions) != 1 {
		t.Fatalf("session scratch dirs: %v", sessions)
	}
	ents, _ := os.ReadDir(sessions[0])
	var left []string
	for _, e := range ents {
		if !handles[e.Name()] {
			left = append(left, e.Name())
		}
	}
	if len(left) > 0 || len(ents) != 12 {
		t.Errorf("session scratch holds %d entries; not a live handle: %v", len(ents), left)
	}
	_ = c.Close()
	waitEmpty(t, scratchRoot)
}

// The official MCP Python SDK drives a scripted agent session
// (tools/mcp-agent/agent_session.py): capture, a failing analysis, the
// handle reanalyzed with a higher limit, preserved, its resource read.
// The workload runs once.
func TestPythonSDKAgentSession(t *testing.T) {
	needNode(t)
	py := venvPython(t)
	if out, err := exec.Command(py, "-c", "import mcp").CombinedOutput(); err != nil {
		t.Skipf("needs the MCP Python SDK in the project venv (pip install -r tools/requirements.txt): %v\n%s", err, out)
	}
	runs := filepath.Join(t.TempDir(), "runs")
	scratchRoot := t.TempDir()
	store := filepath.Join(t.TempDir(), "store")
	ctx, cancel := context.WithTimeout(t.Context(), 180*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join(repoDir, "tools", "mcp-agent", "agent_session.py"),
		filepath.Join(binDir, "flameox-mcp"), countingScript(t, runs), store)
	cmd.Env = append(os.Environ(), "FLAMEOX_SCRATCH="+scratchRoot)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agent session: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var summary struct {
		Handle, Bundle string
		Rows           int
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil || summary.Rows != 5 || summary.Bundle == "" {
		t.Fatalf("summary %q: %v", lines[len(lines)-1], err)
	}
	t.Logf("agent session: %s", lines[len(lines)-1])
	if n, _ := os.ReadFile(runs); string(n) != "x" {
		t.Errorf("the workload ran %d times, want once", len(n))
	}
	waitEmpty(t, scratchRoot)
}

// A capture preserved at capture time whose analysis fails returns the
// failure, its handle and a link to the bundle resource.
func TestFailedAnalysisOfPreservedCaptureLinksBundle(t *testing.T) {
	needNode(t)
	scratchRoot := t.TempDir()
	c := connect(t, filepath.Join(binDir, "flameox-mcp"), "FLAMEOX_SCRATCH="+scratchRoot)
	r := mustCall(t, c, "capture_node_cpu_profile", map[string]any{"argv": []string{"node", hotScript(t)},
		"preserve": filepath.Join(t.TempDir(), "store"), "analysis": map[string]any{"limits": map[string]any{"max_nodes": 1}}})
	f := r.failure(t)
	if f["details"].(evidence.Object)["handle"] == nil {
		t.Errorf("no handle: %v", f)
	}
	var links []string
	for _, ct := range r.res.Content {
		if l, ok := ct.(mcp.ResourceLink); ok {
			links = append(links, l.URI)
		}
	}
	bs := f["details"].(evidence.Object)["partial_evidence"].(evidence.Object)["bundles"].([]any)
	if len(links) != 1 || len(bs) != 1 || links[0] != bs[0].(evidence.Object)["uri"] {
		t.Fatalf("links %v, bundles %v", links, bs)
	}
	read, err := c.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: links[0]}})
	if err != nil || !strings.Contains(read.Contents[0].(mcp.TextResourceContents).Text, `"outcome":"completed"`) {
		t.Errorf("resources/read %s: %v %v", links[0], err, read)
	}
}
