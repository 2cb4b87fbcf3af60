package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/proc"
)

// The pipeline tests run shell scripts in place of the flameox commands:
// they produce the stage behaviours the real commands produce only by
// accident (a crash without a failure block, a stray descendant, a hang),
// so the server's handling of each is exercised deliberately. The real
// commands are composed end to end in cmd/flameox-mcp's tests.

func script(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// line renders a block as a canonical JSONL line for a script to print.
func line(t *testing.T, o evidence.Object) string {
	t.Helper()
	o["schema"] = evidence.Schema
	b, err := evidence.Canonical(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// printf is a shell command printing lines verbatim.
func printf(lines ...string) string {
	var b strings.Builder
	b.WriteString("cat <<'EOF'\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	b.WriteString("EOF\n")
	return b.String()
}

func captureBlock(t *testing.T, limit any) string {
	return line(t, evidence.Object{"kind": "capture", "capture_id": "cap-1", "outcome": "completed", "limit": limit,
		"provider": evidence.Object{"name": "test-v8", "version": nil}})
}

func artifactBlock(t *testing.T) string {
	return line(t, evidence.Object{"kind": "artifact", "artifact_id": "sha256:" + strings.Repeat("ab", 32),
		"path": "/scratch/CPU.1.cpuprofile", "size": 10, "name": "CPU.1.cpuprofile", "role": "cpu-profile",
		"format": "v8-cpuprofile", "capture_id": "cap-1"})
}

func tableLines(t *testing.T, rows int) []string {
	out := []string{line(t, evidence.Object{"kind": "table", "table_id": "rank.t", "name": "cpu.hotspots",
		"operation": "summarize_cpu_hotspots", "columns": []any{}, "artifact_ids": []any{}})}
	for i := range rows {
		out = append(out, line(t, evidence.Object{"kind": "row", "table_id": "rank.t",
			"values": evidence.Object{"rank": i + 1, "function": fmt.Sprintf("f%04d", i)}}))
	}
	return append(out, line(t, evidence.Object{"kind": "summary", "table_id": "rank.t", "rows_emitted": rows,
		"rows_observed": rows, "complete": true}))
}

func captureJob() *job {
	return &job{operation: "summarize_cpu_hotspots", provider: "test-v8", tee: true, stages: []stageSpec{
		{bin: binCapture, args: []string{"test-v8", "--", "true"}}, {bin: binDecode}, {bin: binRank}}}
}

type runResult struct {
	sc  evidence.Object
	res *mcp.CallToolResult
}

func runJob(t *testing.T, ctx context.Context, dir string, j *job, textBound int, resultBound int64) runResult {
	t.Helper()
	r := &runner{binDir: dir, grace: 2 * time.Second}
	c := newCollector(resultBound)
	o := r.run(ctx, j, c)
	res := c.result(j, o, textBound)
	v, err := evidence.ParseValue(res.RawStructuredContent, 64)
	if err != nil {
		t.Fatalf("structured content is not JSON: %v", err)
	}
	sc := v.(evidence.Object)
	if sc["ok"] == res.IsError {
		t.Fatalf("ok=%v disagrees with isError=%v", sc["ok"], res.IsError)
	}
	return runResult{sc, res}
}

func failureOf(t *testing.T, r runResult) evidence.Object {
	t.Helper()
	f, ok := r.sc["failure"].(evidence.Object)
	if !ok || !r.res.IsError {
		t.Fatalf("want a failure, got %v", r.sc)
	}
	return f
}

func partial(f evidence.Object) evidence.Object {
	return f["details"].(evidence.Object)["partial_evidence"].(evidence.Object)
}

// A decoder that dies without a word must not take the completed capture
// with it: the capture block is read as it passes to decode.
func TestCaptureSurvivesDecoderCrash(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, binCapture, printf(captureBlock(t, nil), artifactBlock(t)))
	script(t, dir, binDecode, "echo 'flameox-decode: DECODE_FAILURE: truncated profile' >&2\nexit 4\n")
	script(t, dir, binRank, "cat\n")
	r := runJob(t, t.Context(), dir, captureJob(), DefaultTextBound, DefaultResultBound)
	f := failureOf(t, r)
	if f["code"] != "DECODE_FAILURE" || !strings.Contains(f["message"].(string), "truncated profile") {
		t.Errorf("failure = %v", f)
	}
	pe := partial(f)
	if c, _ := pe["capture"].(evidence.Object); c == nil || c["capture_id"] != "cap-1" {
		t.Errorf("partial evidence lost the capture: %v", pe)
	}
	if a := pe["artifacts"].([]any); len(a) != 1 {
		t.Errorf("partial evidence artifacts = %v", a)
	}
	stages := f["details"].(evidence.Object)["stages"].([]any)
	if len(stages) != 3 || fmt.Sprint(stages[1].(evidence.Object)["exit"].(evidence.Object)["code"]) != "4" {
		t.Errorf("stages = %v", stages)
	}
}

// A failure block that travels the pipeline is the failure; the capture's
// limit receipt rides with it, and the block is not repeated.
func TestFailureBlockWithLimitReceipt(t *testing.T) {
	dir := t.TempDir()
	receipt := evidence.Object{"name": "timeout_seconds", "value": 1, "observed": 1.2, "unit": "seconds"}
	fail := line(t, evidence.Object{"kind": "failure", "code": "LIMIT_EXCEEDED", "message": "workload ran past its budget",
		"location": evidence.Object{}, "details": evidence.Object{"budget": "timeout_seconds"}})
	script(t, dir, binCapture, printf(captureBlock(t, receipt), artifactBlock(t), fail)+"exit 5\n")
	script(t, dir, binDecode, "cat\n")
	script(t, dir, binRank, "cat\nexit 5\n")
	r := runJob(t, t.Context(), dir, captureJob(), DefaultTextBound, DefaultResultBound)
	f := failureOf(t, r)
	if f["code"] != "LIMIT_EXCEEDED" || f["details"].(evidence.Object)["budget"] != "timeout_seconds" {
		t.Errorf("failure = %v", f)
	}
	if l, _ := f["limit"].(evidence.Object); l == nil || l["name"] != "timeout_seconds" {
		t.Errorf("limit receipt = %v", f["limit"])
	}
	if _, many := f["details"].(evidence.Object)["failures"]; many {
		t.Error("the same failure block, seen on the tee and at the end, was kept twice")
	}
	text := r.res.Content[0].(mcp.TextContent).Text
	if !strings.Contains(text, "LIMIT_EXCEEDED") || !strings.Contains(text, "timeout_seconds=1") {
		t.Errorf("failure line = %q", text)
	}
}

func TestStageStatusWithoutFailureBlock(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, binRank, "echo 'flameox-rank: something odd' >&2\nexit 9\n")
	r := runJob(t, t.Context(), dir, &job{operation: "x", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	if f := failureOf(t, r); f["code"] != "INTEGRITY_FAILURE" || !strings.Contains(f["message"].(string), "status 9: flameox-rank: something odd") {
		t.Errorf("failure = %v", f)
	}
	script(t, dir, binRank, "kill -KILL $$\n")
	r = runJob(t, t.Context(), dir, &job{operation: "x", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	if f := failureOf(t, r); f["code"] != "INTERNAL" || !strings.Contains(f["message"].(string), "killed") {
		t.Errorf("failure = %v", f)
	}
	script(t, dir, binRank, "echo '{\"schema\":\"flameox/1\"' \n")
	r = runJob(t, t.Context(), dir, &job{operation: "x", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	if f := failureOf(t, r); f["code"] != "INTERNAL" || !strings.Contains(f["message"].(string), "not a flameox/1 block stream") {
		t.Errorf("failure = %v", f)
	}
	script(t, dir, binRank, "exit 0\n")
	r = runJob(t, t.Context(), dir, &job{operation: "x", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	if f := failureOf(t, r); f["code"] != "INTERNAL" || !strings.Contains(f["message"].(string), "without a result table") {
		t.Errorf("failure = %v", f)
	}
}

func TestMissingCommands(t *testing.T) {
	r := runJob(t, t.Context(), t.TempDir(), captureJob(), DefaultTextBound, DefaultResultBound)
	f := failureOf(t, r)
	if f["code"] != "PROVIDER_UNAVAILABLE" || f["retry"] == nil {
		t.Errorf("missing flameox-capture: %v", f)
	}
	r = runJob(t, t.Context(), t.TempDir(), &job{operation: "x", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	if f := failureOf(t, r); f["code"] != "INTERNAL" || f["retry"] == nil {
		t.Errorf("missing flameox-rank: %v", f)
	}
}

// The text is bounded by dropping rows from the end of the table: the
// header and summary stay, the omission is stated, structuredContent keeps
// every row.
func TestTextBound(t *testing.T) {
	dir := t.TempDir()
	lines := tableLines(t, 500)
	script(t, dir, binRank, printf(lines...))
	const bound = 4096
	r := runJob(t, t.Context(), dir, &job{operation: "summarize_cpu_hotspots", detail: DetailFull, stages: []stageSpec{{bin: binRank}}}, bound, DefaultResultBound)
	if r.res.IsError {
		t.Fatalf("failure: %v", r.sc["failure"])
	}
	rows := r.sc["tables"].([]any)[0].(evidence.Object)["rows"].([]any)
	if len(rows) != 500 {
		t.Fatalf("structured rows = %d, want 500", len(rows))
	}
	text := r.res.Content[0].(mcp.TextContent).Text
	if len(text) > bound || !strings.Contains(text, `"kind":"summary"`) || !strings.Contains(text, `"kind":"table"`) {
		t.Fatalf("text (%d bytes) must keep header and summary within %d bytes", len(text), bound)
	}
	info := r.sc["text"].(evidence.Object)
	kept := strings.Count(text, `"kind":"row"`)
	if info["truncated"] != true || fmt.Sprint(info["omitted_rows"]) != strconv.Itoa(500-kept) {
		t.Errorf("text info = %v with %d rows kept", info, kept)
	}
	if len(r.res.Content) != 2 || !strings.Contains(r.res.Content[1].(mcp.TextContent).Text, fmt.Sprintf("%d rows", 500-kept)) {
		t.Errorf("no truncation note: %v", r.res.Content)
	}
	// Under the bound nothing is cut and no note is added.
	r = runJob(t, t.Context(), dir, &job{operation: "summarize_cpu_hotspots", detail: DetailFull, stages: []stageSpec{{bin: binRank}}}, 1<<20, DefaultResultBound)
	if len(r.res.Content) != 1 || strings.Count(r.res.Content[0].(mcp.TextContent).Text, "\n") != len(lines) {
		t.Errorf("unbounded text has %d items", len(r.res.Content))
	}
}

func TestResultBound(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, binRank, printf(tableLines(t, 500)...))
	r := runJob(t, t.Context(), dir, &job{operation: "summarize_cpu_hotspots", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, 2000)
	f := failureOf(t, r)
	if f["code"] != "LIMIT_EXCEEDED" {
		t.Fatalf("failure = %v", f)
	}
	tables := partial(f)["tables"].([]any)
	kept := len(tables[0].(evidence.Object)["rows"].([]any))
	if kept == 0 || kept >= 500 || fmt.Sprint(f["details"].(evidence.Object)["rows_not_retained"]) != strconv.Itoa(500-kept) {
		t.Errorf("kept %d rows; details %v", kept, f["details"])
	}
}

// Result tables follow one another; one that repeats an earlier table's id
// is a table of its own, not more rows of the first.
func TestTablesInSequence(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, binRank, printf(append(tableLines(t, 2), tableLines(t, 3)...)...))
	r := runJob(t, t.Context(), dir, &job{operation: "preview_text_fragment", detail: DetailFull, stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	tables := r.sc["tables"].([]any)
	if len(tables) != 2 || len(tables[0].(evidence.Object)["rows"].([]any)) != 2 || len(tables[1].(evidence.Object)["rows"].([]any)) != 3 {
		t.Fatalf("tables = %v", tables)
	}
	if strings.Count(r.res.Content[0].(mcp.TextContent).Text, `"kind":"summary"`) != 2 {
		t.Errorf("text lost a table: %s", r.res.Content[0].(mcp.TextContent).Text)
	}
}

// hangScript starts a child in its group and a grandchild in a session of
// its own, records their pids and waits: cancellation must end all three.
func hangScript(pidFile string) string {
	return fmt.Sprintf("sleep 300 &\necho $! >> %[1]s\nsetsid sleep 301 &\necho $! >> %[1]s\necho $$ >> %[1]s\nwait\n", pidFile)
}

// waitPids waits until the script has recorded n pids.
func waitPids(t *testing.T, pidFile string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
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
	t.Fatalf("the script did not start within 30s")
	return nil
}

// alive reports whether pid runs (a zombie has ended).
func alive(pid int) bool {
	p, ok := proc.Read(pid)
	return ok && !p.Zombie
}

func TestCancellationEndsEveryProcess(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	script(t, dir, binCapture, printf(captureBlock(t, nil))+hangScript(pidFile))
	script(t, dir, binDecode, "cat\n")
	script(t, dir, binRank, "cat\n")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan runResult, 1)
	go func() { done <- runJob(t, ctx, dir, captureJob(), DefaultTextBound, DefaultResultBound) }()
	pids := waitPids(t, pidFile, 3)
	cancel()
	r := <-done
	f := failureOf(t, r)
	if f["code"] != "CANCELLED" {
		t.Errorf("failure = %v", f)
	}
	if c, _ := partial(f)["capture"].(evidence.Object); c == nil {
		t.Error("the capture block printed before the cancellation was lost")
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d outlived the cancelled request", p)
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// A stage that ignores SIGTERM is killed after the grace period.
func TestCancellationEscalates(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	script(t, dir, binRank, "trap '' TERM\necho $$ >> "+pidFile+"\nwhile :; do sleep 1; done\n")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan runResult, 1)
	go func() {
		done <- runJob(t, ctx, dir, &job{operation: "x", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	}()
	pids := waitPids(t, pidFile, 1)
	cancel()
	if f := failureOf(t, <-done); f["code"] != "CANCELLED" {
		t.Errorf("failure = %v", f)
	}
	if alive(pids[0]) {
		t.Error("a stage ignoring SIGTERM outlived the cancelled request")
		_ = syscall.Kill(pids[0], syscall.SIGKILL)
	}
}

// Processes a stage leaves behind after a normal exit are ended too.
func TestStraysSweptAfterCompletion(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	script(t, dir, binRank, printf(tableLines(t, 1)...)+
		"setsid sh -c 'echo $$ >> "+pidFile+"; exec sleep 300' </dev/null >/dev/null 2>&1 &\n"+
		"while [ ! -s "+pidFile+" ]; do sleep 0.01; done\n")
	r := runJob(t, t.Context(), dir, &job{operation: "summarize_cpu_hotspots", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	if r.res.IsError {
		t.Fatalf("failure = %v", r.sc["failure"])
	}
	if pids := waitPids(t, pidFile, 1); alive(pids[0]) {
		t.Error("a detached descendant outlived its request")
		_ = syscall.Kill(pids[0], syscall.SIGKILL)
	}
}

// Two requests run at once: a hanging one does not hold up another.
func TestRequestsRunConcurrently(t *testing.T) {
	hang, quick := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(hang, "pids")
	script(t, hang, binRank, hangScript(pidFile))
	script(t, quick, binRank, printf(tableLines(t, 1)...))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan runResult, 1)
	go func() {
		done <- runJob(t, ctx, hang, &job{operation: "x", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	}()
	waitPids(t, pidFile, 3)
	r := runJob(t, t.Context(), quick, &job{operation: "summarize_cpu_hotspots", stages: []stageSpec{{bin: binRank}}}, DefaultTextBound, DefaultResultBound)
	if r.res.IsError {
		t.Fatalf("the second request failed while the first ran: %v", r.sc["failure"])
	}
	select {
	case <-done:
		t.Fatal("the hanging request ended on its own")
	default:
	}
	cancel()
	<-done
}
