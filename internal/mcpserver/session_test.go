package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
)

// completed is a collector that saw a completed capture of one artifact.
func completed(t *testing.T) *collector {
	c := newCollector(DefaultResultBound)
	c.add(evidence.Object{"kind": "capture", "capture_id": "c", "outcome": "completed"}, true)
	c.add(evidence.Object{"kind": "artifact", "artifact_id": "sha256:" + strings.Repeat("ab", 32), "path": "/x", "format": "v8-cpuprofile"}, true)
	c.sources = [][]byte{[]byte("{}\n")}
	return c
}

// Handles are bounded: the oldest expires, says so, and takes its scratch.
func TestHandlesExpireOldestFirst(t *testing.T) {
	root := t.TempDir()
	s := newSession(root, nil)
	var ids, dirs []string
	for range MaxHandles + 1 {
		id, dir, err := s.requestDir()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "out"), []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
		if h := s.adopt(id, dir, "test-v8", completed(t), false); h == nil || h.size != 4 {
			t.Fatalf("handle = %+v", h)
		}
		ids, dirs = append(ids, id), append(dirs, dir)
	}
	_, err := s.get(ids[0])
	if f := evidence.AsFailure(err, ""); f == nil || !strings.Contains(f.Message, "expired") || f.Location.Field != "handle" {
		t.Errorf("the oldest handle: %v", err)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the expired handle's scratch is still there: %v", err)
	}
	if h, err := s.get(ids[MaxHandles]); err != nil || h.id != ids[MaxHandles] {
		t.Errorf("the newest handle: %v", err)
	}
	// A capture that did not complete leaves neither a handle nor scratch.
	id, dir, _ := s.requestDir()
	if h := s.adopt(id, dir, "test-v8", newCollector(DefaultResultBound), false); h != nil {
		t.Error("a capture without a capture block became a handle")
	}
	id2, dir2, _ := s.requestDir()
	if h := s.adopt(id2, dir2, "test-v8", completed(t), true); h != nil {
		t.Error("a cancelled capture became a handle")
	}
	for _, d := range []string{dir, dir2} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("scratch %s left behind", d)
		}
	}
	s.close()
	ents, _ := os.ReadDir(root)
	if len(ents) != 0 {
		t.Errorf("the session left %d entries in its scratch root", len(ents))
	}
	if _, _, err := s.requestDir(); err == nil {
		t.Error("a closed session gave out scratch")
	}
}

// prepare_providers runs each managed provider's setup in turn and reports
// host collectors; flameox-capture is a script here, so no package is
// installed.
func TestPrepareProviders(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script(t, dir, binCapture, fmt.Sprintf(`echo "$*" >> %s
case "$3" in
managed-ok) echo "flameox-capture: managed-ok ready: tool 1.2.3 at /home/u/.cache/flameox/managed/tool-1.2.3/bin/tool (sha256 ab)" >&2 ;;
*) printf '%%s\n' '{"code":"PROVIDER_UNAVAILABLE","details":{},"kind":"failure","location":{},"message":"pip failed","retry":null,"schema":"flameox/1"}'; exit 7 ;;
esac
`, log))
	managed := func(name string) *capture.Provider {
		p := testProvider(t)
		p.Name = name
		p.Operations = nil
		p.Binding = capture.Binding{Executable: "tool", Managed: true, Pinned: "1.2.3", Setup: &capture.Managed{Provider: name}}
		return p
	}
	host := testProvider(t)
	host.Name, host.Operations = "host-sh", nil
	host.Binding = capture.Binding{Executable: "sh"}
	s, err := New(Options{BinDir: dir, Providers: []*capture.Provider{managed("managed-ok"), managed("managed-bad"), host}, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.handlePrepare(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: ToolPrepare,
		Arguments: map[string]any{"providers": []any{"managed-ok", "managed-bad", "host-sh"}}}})
	if err != nil {
		t.Fatal(err)
	}
	sc := res.StructuredContent.(evidence.Object)
	rows := sc["providers"].([]any)
	get := func(i int, k string) any { return rows[i].(evidence.Object)[k] }
	if !res.IsError || sc["ok"] != false || len(rows) != 3 {
		t.Fatalf("result = %v", sc)
	}
	if get(0, "status") != "prepared" || get(0, "version") != "1.2.3" || !strings.HasSuffix(fmt.Sprint(get(0, "executable")), "/bin/tool") {
		t.Errorf("managed-ok = %v", rows[0])
	}
	if get(1, "status") != "failed" || get(1, "failure").(evidence.Object)["code"] != "PROVIDER_UNAVAILABLE" {
		t.Errorf("managed-bad = %v", rows[1])
	}
	if get(2, "status") != "ready" || get(2, "binding") != "path" {
		t.Errorf("host-sh = %v", rows[2])
	}
	calls, _ := os.ReadFile(log)
	if string(calls) != "setup --provider managed-ok\nsetup --provider managed-bad\n" {
		t.Errorf("setup calls, in order: %q", calls)
	}
	for _, bad := range []map[string]any{{"providers": []any{"nope"}}, {"providers": []any{"host-sh", "host-sh"}}, {}} {
		res, _ := s.handlePrepare(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: ToolPrepare, Arguments: bad}})
		if f := res.StructuredContent.(evidence.Object)["failure"].(evidence.Object); f["code"] != "INVALID_ARGUMENT" {
			t.Errorf("%v: %v", bad, f)
		}
	}
}

// A handle a call is reading is not evicted under it: the next oldest is.
func TestBusyHandleOutlivesEviction(t *testing.T) {
	s := newSession(t.TempDir(), nil)
	defer s.close()
	var ids []string
	for range MaxHandles {
		id, dir, _ := s.requestDir()
		s.adopt(id, dir, "test-v8", completed(t), false)
		ids = append(ids, id)
	}
	_, release, err := s.acquire(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	id, dir, _ := s.requestDir()
	s.adopt(id, dir, "test-v8", completed(t), false)
	if _, err := s.get(ids[0]); err != nil {
		t.Errorf("the busy handle was evicted: %v", err)
	}
	if _, err := s.get(ids[1]); err == nil {
		t.Error("the next oldest handle was not evicted")
	}
	release()
	release() // idempotent
	id, dir, _ = s.requestDir()
	s.adopt(id, dir, "test-v8", completed(t), false)
	if _, err := s.get(ids[0]); err == nil {
		t.Error("the released oldest handle was not evicted")
	}
}
