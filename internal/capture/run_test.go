package capture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/proc"
	index "github.com/flameox/flameox/internal/store"
	"github.com/flameox/flameox/internal/wire"
)

// testProvider runs the test binary as the workload mode given in the
// request's argv[0]; the rest of argv are the mode's arguments.
func testProvider(roles []Role, edit func(*Plan, string)) *Provider {
	return &Provider{
		Name:      "test",
		Params:    []param.Param{{Name: "level", Type: param.Int, Min: param.F(0)}},
		Artifacts: roles,
		Binding:   Binding{Executable: "test-workload"},
		Resolve: func(ctx context.Context, req *Request) (*Resolved, error) {
			return &Resolved{Executable: &evidence.Executable{Path: os.Args[0], SHA256: "test"}, Version: "1"}, nil
		},
		Plan: func(req *Request, scratch string, r *Resolved) (*Plan, error) {
			out := filepath.Join(scratch, "out")
			pl := &Plan{
				Command:   append([]string{os.Args[0]}, req.Argv[1:]...),
				Env:       []string{envWorkload + "=" + req.Argv[0], "FLAMEOX_TEST_OUT=" + out},
				Dir:       req.Cwd,
				OutputDir: out,
			}
			if edit != nil {
				edit(pl, scratch)
			}
			return pl, nil
		},
	}
}

var outRole = []Role{{Role: "result", Format: "text", Pattern: "*.out", Required: true}}

// result is what one Run wrote and returned.
type result struct {
	capture *evidence.Capture
	err     error
	blocks  []*evidence.Raw
	root    string
}

func run(t *testing.T, ctx context.Context, p *Provider, argv []string, opt Options) *result {
	t.Helper()
	if opt.ScratchRoot == "" {
		opt.ScratchRoot = t.TempDir()
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	c, err := Run(ctx, p, &Request{Argv: argv, Cwd: t.TempDir()}, opt, w)
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	res := &result{capture: c, err: err, root: opt.ScratchRoot}
	r := wire.NewReader(&buf)
	for {
		b, rerr := r.Next()
		if rerr != nil {
			break
		}
		res.blocks = append(res.blocks, b)
	}
	return res
}

func (r *result) code() evidence.Code {
	var f *evidence.Failure
	if errors.As(r.err, &f) {
		return f.Code
	}
	if r.err != nil {
		return "untyped: " + evidence.Code(r.err.Error())
	}
	return ""
}

func (r *result) kinds() []string {
	var ks []string
	for _, b := range r.blocks {
		ks = append(ks, b.Kind())
	}
	return ks
}

func (r *result) artifacts(t *testing.T) []*evidence.Artifact {
	var out []*evidence.Artifact
	for _, b := range r.blocks {
		if b.Kind() == evidence.KindArtifact {
			a, err := evidence.ArtifactFrom(b.Obj)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
		}
	}
	return out
}

// gone reports whether a process has ended (absent or a zombie).
func gone(pid int) bool {
	p, ok := proc.Read(pid)
	return !ok || p.Zombie
}

// waitFile waits for a file the workload publishes atomically.
func waitFile(t *testing.T, path string, done <-chan struct{}) []byte {
	for {
		if b, err := os.ReadFile(path); err == nil {
			return b
		}
		select {
		case <-done:
			t.Fatalf("workload ended before writing %s", path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func pidsIn(t *testing.T, b []byte) []int {
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, n)
	}
	return pids
}

// requestDirs lists the request directories in a scratch root.
func requestDirs(t *testing.T, root string) []string {
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestCancelEndsTreeAndRemovesScratch(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *result)
	root := t.TempDir()
	go func() {
		done <- run(t, ctx, testProvider(outRole, nil), []string{"sleep-tree", pidfile}, Options{ScratchRoot: root})
	}()
	ended := make(chan struct{})
	pids := pidsIn(t, waitFile(t, pidfile, ended))
	cancel()
	res := <-done
	close(ended)
	if res.code() != evidence.CodeCancelled {
		t.Fatalf("code %q, want CANCELLED (err %v)", res.code(), res.err)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("process %d survived cancellation", pid)
		}
	}
	if dirs := requestDirs(t, root); len(dirs) != 0 {
		t.Errorf("scratch root still holds %v", dirs)
	}
	if got := res.kinds(); len(got) != 1 || got[0] != evidence.KindCapture {
		t.Fatalf("blocks %v, want one capture block", got)
	}
	if res.capture.Outcome != evidence.OutcomeCancelled || res.capture.Scratch != "" {
		t.Errorf("outcome %q scratch %q", res.capture.Outcome, res.capture.Scratch)
	}
}

func TestTimeoutBudgetEndsTree(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	res := run(t, context.Background(), testProvider(outRole, nil), []string{"sleep-tree", pidfile},
		Options{Budget: Budget{TimeoutSeconds: 0.5}})
	if res.code() != evidence.CodeLimitExceeded {
		t.Fatalf("code %q, want LIMIT_EXCEEDED (err %v)", res.code(), res.err)
	}
	c := res.capture
	if c.Outcome != evidence.OutcomeLimitExceeded || c.Limit == nil || c.Limit.Name != LimitTimeout || c.Limit.Value != 0.5 {
		t.Fatalf("outcome %q limit %+v", c.Outcome, c.Limit)
	}
	if obs, _ := c.Limit.Observed.(float64); obs < 0.5 {
		t.Errorf("observed %v, want at least the budget", c.Limit.Observed)
	}
	if c.Signal == "" {
		t.Errorf("the ended workload has no signal: exit %v", c.ExitCode)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pidsIn(t, b) {
		if !gone(pid) {
			t.Errorf("process %d survived the timeout", pid)
		}
	}
	if got := res.kinds(); len(got) != 1 || got[0] != evidence.KindCapture {
		t.Fatalf("blocks %v", got)
	}
	if c.Budget[LimitTimeout] != 0.5 || c.Budget[LimitMemory] != nil {
		t.Errorf("budget recorded as %v", c.Budget)
	}
}

func TestMemoryBudget(t *testing.T) {
	const limit = 64 << 20
	res := run(t, context.Background(), testProvider(outRole, nil), []string{"alloc", strconv.Itoa(256 << 20)},
		Options{Budget: Budget{MaxMemoryBytes: limit}})
	if res.code() != evidence.CodeLimitExceeded {
		t.Fatalf("code %q, want LIMIT_EXCEEDED (err %v)", res.code(), res.err)
	}
	l := res.capture.Limit
	if l == nil || l.Name != LimitMemory || l.Unit != "bytes" {
		t.Fatalf("limit %+v", l)
	}
	if obs := l.Observed.(int64); obs <= limit {
		t.Errorf("observed %d bytes, not above the %d limit", obs, limit)
	}
}

func TestConsoleBoundedCountsOmission(t *testing.T) {
	const n = 100000
	res := run(t, context.Background(), testProvider(nil, nil), []string{"spam", strconv.Itoa(n), "10"}, Options{})
	if res.err != nil {
		t.Fatal(res.err)
	}
	out := res.capture.Console["stdout"]
	if out.Mode != ConsoleBounded || out.Observed != n || out.Retained != ConsoleHead+ConsoleTail || out.Omitted != n-ConsoleHead-ConsoleTail {
		t.Fatalf("stdout %+v", *out)
	}
	if !strings.HasPrefix(out.Text, "HEAD") || !strings.HasSuffix(out.Text, "TAIL") ||
		!strings.Contains(out.Text, "["+"flameox: "+strconv.Itoa(n-ConsoleHead-ConsoleTail)+" bytes omitted]") {
		t.Errorf("stdout text does not keep head, marker and tail: %.40q…", out.Text)
	}
	errs := res.capture.Console["stderr"]
	if errs.Observed != 10 || errs.Omitted != 0 || errs.Text != strings.Repeat("e", 10) {
		t.Errorf("stderr %+v", *errs)
	}
	if kinds := res.kinds(); len(kinds) != 1 {
		t.Errorf("bounded console emitted blocks %v", kinds)
	}
}

// TestConsoleReplacementNote: the U+FFFD note appears only for a stream
// whose retained bytes were not valid UTF-8, and names that stream.
func TestConsoleReplacementNote(t *testing.T) {
	for _, tc := range []struct {
		name, stdout, stderr string
		want                 []string
	}{
		{"empty", "", "", nil},
		{"valid", "héllo\n", "ok\n", nil},
		{"invalid stderr", "fine", "bad \xff\xfe", []string{"console stderr"}},
		{"invalid both", "\xc3", "\x80", []string{"console stdout", "console stderr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, context.Background(), testProvider(nil, nil), []string{"print", hex.EncodeToString([]byte(tc.stdout)), hex.EncodeToString([]byte(tc.stderr))}, Options{})
			if res.err != nil {
				t.Fatal(res.err)
			}
			var got []string
			for _, n := range res.capture.Notes {
				if strings.Contains(n, "U+FFFD") {
					got = append(got, n)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("replacement notes %q, want %d naming %v", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w+":") {
					t.Errorf("note %q does not name %s", got[i], w)
				}
			}
		})
	}
}

func TestConsoleFullArtifacts(t *testing.T) {
	const n = 100000
	for _, tc := range []struct {
		name string
		opt  Options
		edit func(*Plan, string)
	}{
		{"option", Options{Console: ConsoleFull}, nil},
		{"plan", Options{}, func(p *Plan, _ string) { p.FullConsole = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, context.Background(), testProvider(nil, tc.edit), []string{"spam", strconv.Itoa(n), "7"}, tc.opt)
			if res.err != nil {
				t.Fatal(res.err)
			}
			arts := res.artifacts(t)
			if len(arts) != 2 {
				t.Fatalf("artifacts %v", arts)
			}
			for _, a := range arts {
				b, err := os.ReadFile(a.Path)
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(b)
				if a.ID != "sha256:"+hex.EncodeToString(sum[:]) || a.Size != int64(len(b)) || a.Format != "text" {
					t.Errorf("artifact %+v does not describe its file", a)
				}
				want := map[string]int64{RoleConsoleStdout: n, RoleConsoleStderr: 7}[a.Role]
				if a.Size != want || filepath.Base(filepath.Dir(a.Path)) != "console" {
					t.Errorf("%s: size %d at %s", a.Role, a.Size, a.Path)
				}
				cs := res.capture.Console[strings.TrimPrefix(a.Role, "console-")]
				if cs.Mode != ConsoleFull || cs.ArtifactID != a.ID || cs.Omitted != 0 || cs.Retained != want {
					t.Errorf("console %+v", *cs)
				}
			}
		})
	}
}

func TestDetachedWriterFinishes(t *testing.T) {
	for _, mode := range []string{"group", "setsid"} {
		t.Run(mode, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			res := run(t, context.Background(), testProvider(nil, nil), []string{"detached-writer", mode, pidfile},
				Options{Console: ConsoleFull})
			if res.err != nil {
				t.Fatal(res.err)
			}
			if res.capture.Outcome != evidence.OutcomeCompleted {
				t.Fatalf("outcome %q", res.capture.Outcome)
			}
			for _, a := range res.artifacts(t) {
				if a.Role != RoleConsoleStdout {
					continue
				}
				b, err := os.ReadFile(a.Path)
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(b)) != a.Size || !bytes.HasPrefix(b, []byte("parent exits\n")) {
					t.Errorf("stdout file %d bytes, artifact says %d", len(b), a.Size)
				}
			}
			if !strings.Contains(strings.Join(res.capture.Notes, "\n"), "ended 1 process(es)") {
				t.Errorf("notes %q do not record the ended writer", res.capture.Notes)
			}
			// In the group it was ended; out of it (setsid, its parent gone
			// before a poll saw it) its next write hits the closed pipe.
			b, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			pid := pidsIn(t, b)[0]
			for i := 0; !gone(pid); i++ {
				if i == 3000 {
					t.Fatalf("writer %d still runs after the capture ended", pid)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestHashSettledRejectsChangedFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stdout")
	if err := os.WriteFile(p, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := hashSettled(p, 10); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("!")
	f.Close()
	for _, tc := range []struct {
		name string
		size int64
	}{{"extra byte", 10}, {"shorter", 12}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hashSettled(p, tc.size)
			var fl *evidence.Failure
			if !errors.As(err, &fl) || fl.Code != evidence.CodeIntegrity {
				t.Fatalf("err %v, want INTEGRITY_FAILURE", err)
			}
		})
	}
}

func TestOutputGrowth(t *testing.T) {
	support := func(p *Plan, scratch string) {
		// Named like an output on purpose: it must count neither as growth
		// nor as an artifact.
		p.Support = []SupportFile{{Path: filepath.Join(p.OutputDir, "plugin.out"), Content: make([]byte, 64<<10)}}
	}
	t.Run("support file does not count", func(t *testing.T) {
		res := run(t, context.Background(), testProvider(outRole, support), []string{"outputs", "0", "r.out=100"},
			Options{Budget: Budget{MaxOutputBytes: 1024}})
		if res.err != nil {
			t.Fatal(res.err)
		}
		if a := res.artifacts(t); len(a) != 1 || a[0].Size != 100 {
			t.Fatalf("artifacts %v", a)
		}
	})
	t.Run("workload growth ends it", func(t *testing.T) {
		res := run(t, context.Background(), testProvider(outRole, support), []string{"grow", strconv.Itoa(1 << 20)},
			Options{Budget: Budget{MaxOutputBytes: 1024}})
		if res.code() != evidence.CodeLimitExceeded {
			t.Fatalf("code %q (err %v)", res.code(), res.err)
		}
		l := res.capture.Limit
		if l.Name != LimitOutput || l.Observed.(int64) <= 1024 {
			t.Fatalf("limit %+v", l)
		}
	})
	t.Run("free-space floor", func(t *testing.T) {
		res := run(t, context.Background(), testProvider(outRole, nil), []string{"sleep"},
			Options{Budget: Budget{MinFreeBytes: 1 << 62}})
		if res.code() != evidence.CodeLimitExceeded || res.capture.Limit.Name != LimitFreeSpace {
			t.Fatalf("code %q limit %+v", res.code(), res.capture.Limit)
		}
	})
}

func TestOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		argv    []string
		edit    func(*Plan, string)
		code    evidence.Code
		outcome string
		arts    int
	}{
		{"completed", []string{"outputs", "0", "a.out=3", "b.out=4"}, nil, "", evidence.OutcomeCompleted, 2},
		{"zero exit, missing output", []string{"outputs", "0", "a.txt=3"}, nil, evidence.CodeCaptureFailed, evidence.OutcomeOutputsMissing, 0},
		{"non-accepted exit keeps artifacts", []string{"outputs", "3", "a.out=3"}, nil, evidence.CodeCaptureFailed, evidence.OutcomeWorkloadFailed, 1},
		{"accepted non-zero exit", []string{"outputs", "1", "a.out=3"},
			func(p *Plan, _ string) { p.AcceptExit = []int{0, 1} }, "", evidence.OutcomeCompleted, 1},
		{"any exit counts, post runs", []string{"outputs", "3"},
			func(p *Plan, _ string) {
				p.AnyExit = true
				p.Post = [][]string{{"sh", "-c", "printf post > " + filepath.Join(p.OutputDir, "post.out")}}
			}, "", evidence.OutcomeCompleted, 1},
		{"any exit is not a signal", []string{"outputs", "0"},
			func(p *Plan, _ string) { p.AnyExit = true; p.Command = []string{"sh", "-c", "kill -9 $$"} },
			evidence.CodeCaptureFailed, evidence.OutcomeWorkloadFailed, 0},
		{"post command writes output", []string{"outputs", "0"},
			func(p *Plan, _ string) {
				p.Post = [][]string{{"sh", "-c", "printf post > " + filepath.Join(p.OutputDir, "post.out")}}
			}, "", evidence.OutcomeCompleted, 1},
		{"failing post command", []string{"outputs", "0", "a.out=3"},
			func(p *Plan, _ string) { p.Post = [][]string{{"sh", "-c", "exit 4"}} },
			evidence.CodeCaptureFailed, evidence.OutcomeWorkloadFailed, 1},
		{"post skipped after failure", []string{"outputs", "5"},
			func(p *Plan, _ string) {
				p.Post = [][]string{{"sh", "-c", "printf post > " + filepath.Join(p.OutputDir, "post.out")}}
			}, evidence.CodeCaptureFailed, evidence.OutcomeWorkloadFailed, 0},
		{"start failure", []string{"outputs", "0"},
			func(p *Plan, _ string) { p.Command = []string{"/nonexistent/collector"} },
			evidence.CodeCaptureFailed, evidence.OutcomeStartFailed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, context.Background(), testProvider(outRole, tc.edit), tc.argv, Options{})
			if res.code() != tc.code {
				t.Fatalf("code %q, want %q (err %v)", res.code(), tc.code, res.err)
			}
			if res.capture.Outcome != tc.outcome {
				t.Fatalf("outcome %q, want %q", res.capture.Outcome, tc.outcome)
			}
			arts := res.artifacts(t)
			if len(arts) != tc.arts {
				t.Fatalf("%d artifacts, want %d", len(arts), tc.arts)
			}
			for _, a := range arts {
				if a.CaptureID != res.capture.ID || a.Role != "result" || a.Producer.Name != "test-workload" {
					t.Errorf("artifact %+v", a)
				}
			}
			if res.blocks[0].Kind() != evidence.KindCapture {
				t.Errorf("first block is %s", res.blocks[0].Kind())
			}
			// The request directory stays, completed and evictable.
			if _, err := os.Stat(filepath.Join(res.capture.Scratch, completeName)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestValidationRunsNothing(t *testing.T) {
	p := testProvider(outRole, nil)
	for _, tc := range []struct {
		name string
		req  Request
		opt  Options
	}{
		{"unknown argument", Request{Argv: []string{"sleep"}, Args: evidence.Object{"bogus": 1}}, Options{}},
		{"argument type", Request{Argv: []string{"sleep"}, Args: evidence.Object{"level": "high"}}, Options{}},
		{"argument range", Request{Argv: []string{"sleep"}, Args: evidence.Object{"level": -1}}, Options{}},
		{"no argv", Request{}, Options{}},
		{"console mode", Request{Argv: []string{"sleep"}}, Options{Console: "some"}},
		{"precheck", Request{Argv: []string{"sleep"}}, Options{Precheck: func(*Provider, *Request, map[string]bool) error {
			return evidence.Failf(evidence.CodeUnsupportedFormat, "nope")
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.opt.ScratchRoot = root
			tc.req.Cwd = t.TempDir()
			var buf bytes.Buffer
			w := wire.NewWriter(&buf)
			c, err := Run(context.Background(), p, &tc.req, tc.opt, w)
			w.Flush()
			var f *evidence.Failure
			if !errors.As(err, &f) || (f.Code != evidence.CodeInvalidArgument && f.Code != evidence.CodeUnsupportedFormat) {
				t.Fatalf("err %v", err)
			}
			if c != nil || buf.Len() != 0 || len(requestDirs(t, root)) != 0 {
				t.Errorf("a rejected request left capture %v, output %q, scratch %v", c, buf.String(), requestDirs(t, root))
			}
		})
	}
}

func TestUnavailableProvider(t *testing.T) {
	p := testProvider(outRole, nil)
	p.Resolve = func(ctx context.Context, req *Request) (*Resolved, error) {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable, Message: "collector missing",
			Retry: &evidence.Retry{Action: "install it"}}
	}
	res := run(t, context.Background(), p, []string{"sleep"}, Options{})
	if res.code() != evidence.CodeProviderUnavailable || len(res.blocks) != 0 || len(requestDirs(t, res.root)) != 0 {
		t.Fatalf("code %q blocks %v", res.code(), res.kinds())
	}
}

func TestPreserve(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		code evidence.Code
	}{
		{"completed", []string{"outputs", "0", "a.out=3", "b.out=5"}, ""},
		// Native outputs are published even when the capture failed.
		{"failed", []string{"outputs", "3", "a.out=3"}, evidence.CodeCaptureFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := t.TempDir()
			res := run(t, context.Background(), testProvider(outRole, nil), tc.argv, Options{Preserve: store})
			if res.code() != tc.code {
				t.Fatalf("code %q, want %q (err %v)", res.code(), tc.code, res.err)
			}
			if res.capture.BundleID == "" {
				t.Fatalf("capture block records no bundle id; notes %v", res.capture.Notes)
			}
			kinds := res.kinds()
			if kinds[len(kinds)-1] != evidence.KindBundle {
				t.Fatalf("blocks %v end without the bundle block", kinds)
			}
			b := res.blocks[len(res.blocks)-1].Obj
			if b["bundle_id"] != res.capture.BundleID {
				t.Errorf("bundle block %v, capture says %s", b["bundle_id"], res.capture.BundleID)
			}
			members := map[string]bool{}
			for _, m := range b["members"].([]any) {
				mo := m.(evidence.Object)
				if mo["role"] == "native" {
					members[mo["sha256"].(string)] = true
				}
			}
			arts := res.artifacts(t)
			if len(arts) == 0 || len(members) != len(arts) {
				t.Fatalf("%d native members for %d artifacts", len(members), len(arts))
			}
			for _, a := range arts {
				if !members[a.Digest()] {
					t.Errorf("artifact %s is not in the bundle", a.Name)
				}
			}
			// The store's index records the bundle with its outcome.
			entries, err := index.Entries(store)
			if err != nil || len(entries) != 1 || entries[0].BundleID != res.capture.BundleID ||
				len(entries[0].Outcomes) != 1 || entries[0].Outcomes[0] != res.capture.Outcome {
				t.Errorf("index entries %+v, %v", entries, err)
			}
		})
	}
}

func TestEvictionKeepsLockedAndIncomplete(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, complete bool, age time.Duration) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, lockName), nil, 0o600)
		os.WriteFile(filepath.Join(d, "data"), make([]byte, 1000), 0o600)
		if complete {
			p := filepath.Join(d, completeName)
			os.WriteFile(p, nil, 0o600)
			tm := time.Now().Add(-age)
			os.Chtimes(p, tm, tm)
		}
		return d
	}
	var done []string
	for i := range 6 {
		done = append(done, mk("done"+strconv.Itoa(i), true, time.Duration(10-i)*time.Hour))
	}
	locked := mk("locked", true, 100*time.Hour)
	running := mk("running", false, 0)
	lf, err := os.Open(filepath.Join(locked, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	notes, err := evict(root, 4, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{locked, running, done[4], done[5]} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was evicted", d)
		}
	}
	for _, d := range done[:4] {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s (old, completed, unlocked) was kept", d)
		}
	}
	if len(notes) != 0 {
		t.Errorf("notes %v", notes)
	}
	// Over a byte bound that only locked and running directories exceed.
	notes, err = evict(root, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(requestDirs(t, root)) != 2 || len(notes) != 1 {
		t.Errorf("dirs %v notes %v", requestDirs(t, root), notes)
	}
}

func TestBudgetParsing(t *testing.T) {
	b, err := ParseBudget("timeout_seconds=1.5,max_memory_bytes=1048576")
	if err != nil {
		t.Fatal(err)
	}
	if b.TimeoutSeconds != 1.5 || b.MaxMemoryBytes != 1<<20 || b.MaxOutputBytes != 0 {
		t.Fatalf("%+v", b)
	}
	for _, bad := range []string{"timeout=1", "max_memory_bytes=1.5", "max_memory_bytes=0", "timeout_seconds", "timeout_seconds=x", "timeout_seconds=1,timeout_seconds=2"} {
		t.Run(bad, func(t *testing.T) {
			_, err := ParseBudget(bad)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument {
				t.Fatalf("err %v", err)
			}
		})
	}
}

// TestScratchRootRefusedUnlessPrivate: a pre-existing scratch root that
// another user owns, that others may write, or that is a symbolic link is
// refused before anything runs, as ssh refuses such files.
func TestScratchRootRefusedUnlessPrivate(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test chowns a directory to another user and must run as root")
	}
	for _, tc := range []struct {
		name string
		make func(dir string) error
	}{
		{"world-writable", func(d string) error { return os.Chmod(d, 0o777) }},
		{"group-writable", func(d string) error { return os.Chmod(d, 0o770) }},
		{"other owner", func(d string) error { return os.Chown(d, 65534, 65534) }},
		{"symlink", func(d string) error {
			if err := os.Rename(d, d+".real"); err != nil {
				return err
			}
			return os.Symlink(d+".real", d)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "scratch")
			if err := os.Mkdir(root, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(root); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(t.TempDir(), "ran")
			p := testProvider(outRole, func(pl *Plan, _ string) { pl.Command = []string{"touch", marker} })
			res := run(t, context.Background(), p, []string{"outputs", "0"}, Options{ScratchRoot: root})
			if res.code() != evidence.CodeInvalidArgument || res.capture != nil || len(res.blocks) != 0 {
				t.Fatalf("code %q, capture %v, %d blocks (err %v)", res.code(), res.capture, len(res.blocks), res.err)
			}
			if !strings.Contains(res.err.Error(), root) {
				t.Errorf("failure %q does not name the root", res.err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the workload ran")
			}
			if ents, _ := os.ReadDir(root); len(ents) != 0 {
				t.Errorf("root holds %d entries", len(ents))
			}
		})
	}
	// A private root of ours is used, and one that does not exist is made.
	for _, root := range []string{filepath.Join(t.TempDir(), "private"), filepath.Join(t.TempDir(), "new", "root")} {
		_ = os.Mkdir(filepath.Dir(root), 0o700)
		_ = os.Mkdir(root, 0o700)
		if res := run(t, context.Background(), testProvider(outRole, nil), []string{"outputs", "0", "a.out=1"}, Options{ScratchRoot: root}); res.err != nil {
			t.Fatal(res.err)
		}
	}
}
