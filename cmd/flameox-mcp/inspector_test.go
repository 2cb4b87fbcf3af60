package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/mcpserver"
	"github.com/flameox/flameox/internal/registry"
)

// inspectorVersion is pinned in tools/mcp-inspector/package.json and its
// lockfile.
const inspectorVersion = "0.15.0"

// inspector returns the MCP Inspector CLI installed from the pinned
// lockfile, running `npm ci` when it is missing or not the pinned version.
func inspector(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not found in PATH: the MCP Inspector test needs Node's npm/npx (CI installs Node 20 with npm)")
	}
	dir := filepath.Join(repoDir, "tools", "mcp-inspector")
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	var pkg struct{ Version string }
	b, _ := os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "package.json"))
	if json.Unmarshal(b, &pkg) != nil || pkg.Version != inspectorVersion {
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in tools/mcp-inspector: %v\n%s", err, out)
		}
	}
	return bin
}

// inspect runs one Inspector CLI method against flameox-mcp and parses the
// JSON it prints.
func inspect(t *testing.T, bin string, args ...string) evidence.Object {
	t.Helper()
	return inspectServer(t, bin, nil, args...)
}

// inspectServer is inspect with arguments for flameox-mcp itself.
func inspectServer(t *testing.T, bin string, server []string, args ...string) evidence.Object {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	// The server's own flags follow its command; the Inspector keeps the
	// options it does not know as the target's.
	argv := append(append([]string{"--cli", filepath.Join(binDir, "flameox-mcp")}, server...), args...)
	cmd := exec.CommandContext(ctx, bin, argv...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("mcp-inspector %v: %v\n%s%s", args, err, out, stderr)
	}
	v, err := evidence.ParseValue(out, 128)
	if err != nil {
		t.Fatalf("mcp-inspector printed no JSON: %v\n%s", err, out)
	}
	return v.(evidence.Object)
}

// The MCP Inspector CLI is an independent client (the TypeScript SDK, which
// also validates structuredContent against each tool's outputSchema).
func TestInspectorCLI(t *testing.T) {
	prof := nodeProfile(t)
	bin := inspector(t)

	list := inspect(t, bin, "--method", "tools/list")
	var got, want []string
	for _, tool := range list["tools"].([]any) {
		got = append(got, tool.(evidence.Object)["name"].(string))
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
		t.Fatalf("tools/list via the Inspector = %v, want %v", got, want)
	}

	paths, _ := json.Marshal([]string{prof})
	res := inspect(t, bin, "--method", "tools/call", "--tool-name", "summarize_cpu_hotspots",
		"--tool-arg", "paths="+string(paths), "--tool-arg", "top=3")
	if res["isError"] == true {
		t.Fatalf("tools/call failed: %v", res)
	}
	rows := rowObjects(t, res["structuredContent"].(evidence.Object)["tables"].([]any)[0].(evidence.Object))
	if len(rows) != 3 || rows[0].(evidence.Object)["function"] != "hotLoop" {
		t.Fatalf("rows via the Inspector = %v, want 3 with hotLoop first", rows)
	}

	res = inspect(t, bin, "--method", "tools/call", "--tool-name", "summarize_cpu_hotspots",
		"--tool-arg", "paths="+string(paths), "--tool-arg", "format=v8-cpuprofile", "--tool-arg", "metric=self")
	f, _ := res["structuredContent"].(evidence.Object)["failure"].(evidence.Object)
	if res["isError"] != true || f == nil || f["code"] != "INVALID_ARGUMENT" {
		t.Fatalf("metric on a V8 profile via the Inspector = %v", res)
	}

	// A capture tool, preserving to a store. Each Inspector CLI call is a
	// session of its own, so the capture's handle ends with it; the bundle
	// stays, and a server given the store serves it.
	needNode(t)
	store := filepath.Join(t.TempDir(), "store")
	argv, _ := json.Marshal([]string{"node", hotScript(t)})
	res = inspect(t, bin, "--method", "tools/call", "--tool-name", "capture_node_cpu_profile",
		"--tool-arg", "argv="+string(argv), "--tool-arg", `analysis={"top":3}`, "--tool-arg", "preserve="+store)
	sc := res["structuredContent"].(evidence.Object)
	if res["isError"] == true {
		t.Fatalf("capture via the Inspector failed: %v", sc["failure"])
	}
	rows = rowObjects(t, sc["tables"].([]any)[0].(evidence.Object))
	bundles := sc["bundles"].([]any)
	h, _ := sc["handle"].(evidence.Object)
	if len(rows) != 3 || rows[0].(evidence.Object)["function"] != "hotLoop" || len(bundles) != 1 || h == nil {
		t.Fatalf("capture via the Inspector: rows %v, bundles %v, handle %v", rows, bundles, h)
	}
	bundleID := bundles[0].(evidence.Object)["bundle_id"].(string)
	uri := bundles[0].(evidence.Object)["uri"].(string)

	// reanalyze on that handle, in a later session: it has expired, and
	// the failure says what to use instead.
	res = inspect(t, bin, "--method", "tools/call", "--tool-name", "reanalyze", "--tool-arg", "handle="+h["id"].(string))
	f, _ = res["structuredContent"].(evidence.Object)["failure"].(evidence.Object)
	if res["isError"] != true || f == nil || f["code"] != "INVALID_ARGUMENT" || !strings.Contains(fmt.Sprint(f["retry"]), "bundle") {
		t.Fatalf("reanalyze on another session's handle via the Inspector = %v", res)
	}
	// reanalyze on the preserved bundle, with another operation.
	res = inspectServer(t, bin, []string{"--store", store}, "--method", "tools/call", "--tool-name", "reanalyze",
		"--tool-arg", "bundle="+bundleID, "--tool-arg", `analysis={"operation":"summarize_cpu_caller_edges","top":2}`)
	if res["isError"] == true || len(rowObjects(t, res["structuredContent"].(evidence.Object)["tables"].([]any)[0].(evidence.Object))) != 2 {
		t.Fatalf("reanalyze on the bundle via the Inspector = %v", res)
	}
	// resources/list and resources/read on the preserved bundle.
	list = inspectServer(t, bin, []string{"--store", store}, "--method", "resources/list")
	if rs := list["resources"].([]any); len(rs) != 1 || rs[0].(evidence.Object)["uri"] != uri {
		t.Fatalf("resources/list via the Inspector = %v", list)
	}
	read := inspectServer(t, bin, []string{"--store", store}, "--method", "resources/read", "--uri", uri)
	text := read["contents"].([]any)[0].(evidence.Object)["text"].(string)
	checkSafeProjection(t, text, store)
	if !strings.Contains(text, `"outcome":"completed"`) || !strings.Contains(text, bundleID) {
		t.Fatalf("resources/read via the Inspector = %s", text)
	}
}
