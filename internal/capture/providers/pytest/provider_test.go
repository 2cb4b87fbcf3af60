package pytest

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/pytestevents"
	"github.com/flameox/flameox/internal/table"
)

const repoRoot = "../../../.."

// venvPython returns the project venv's interpreter, skipping the test when
// the venv or its pytest is missing.
func venvPython(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(repoRoot, ".venv")
	}
	py, err := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(py); err != nil {
		t.Skipf("needs pytest in the project venv (%s): python3 -m venv .venv && .venv/bin/pip install -r tools/requirements.txt", venv)
	}
	if err := exec.Command(py, "-c", "import pytest, xdist").Run(); err != nil {
		t.Skipf("needs pytest and pytest-xdist in %s: .venv/bin/pip install -r tools/requirements.txt", venv)
	}
	return py
}

func failure(t *testing.T, err error, code evidence.Code) *evidence.Failure {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) {
		t.Fatalf("want a %s failure, got %v", code, err)
	}
	if f.Code != code {
		t.Fatalf("got %s, want %s: %v", f.Code, code, f)
	}
	return f
}

func TestParseArgv(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		ok   bool
	}{
		{"explicit target", []string{"python3", "-m", "pytest", "tests/"}, true},
		{"options and targets", []string{"/v/bin/python", "-m", "pytest", "-x", "-n", "2", "a.py::t"}, true},
		{"no target", []string{"python3", "-m", "pytest"}, false},
		{"pytest executable", []string{"pytest", "tests/"}, false},
		{"other module", []string{"python3", "-m", "unittest", "t"}, false},
		{"interpreter options", []string{"python3", "-X", "dev", "-m", "pytest", "t"}, false},
		{"empty interpreter", []string{"", "-m", "pytest", "t"}, false},
		{"plugin disabled", []string{"python3", "-m", "pytest", "-p", "no:flameox_pytest", "t"}, false},
		{"plugin disabled, joined", []string{"python3", "-m", "pytest", "-pno:flameox_pytest", "t"}, false},
		{"another plugin disabled", []string{"python3", "-m", "pytest", "-p", "no:cacheprovider", "t"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseArgv(c.argv)
			if c.ok && err != nil {
				t.Fatal(err)
			}
			if !c.ok {
				failure(t, err, evidence.CodeInvalidArgument)
			}
		})
	}
}

func TestAtLeast(t *testing.T) {
	cases := []struct {
		v    string
		want bool
	}{
		{"9.2.0", true}, {"8.3.0", true}, {"8.3.0rc1", true}, {"8.4.dev12+g1234", true}, {"10.0", true},
		{"8.2.2", false}, {"7.4.4", false}, {"8", false}, {"", false}, {"x.y", false},
	}
	for _, c := range cases {
		if got := AtLeast(c.v, 8, 3); got != c.want {
			t.Errorf("AtLeast(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	py := venvPython(t)
	ctx := context.Background()
	t.Run("venv interpreter", func(t *testing.T) {
		r, err := resolve(ctx, &capture.Request{Argv: []string{py, "-m", "pytest", "t"}, Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if !AtLeast(r.Version, 8, 3) || r.Executable.Path != py || len(r.Executable.SHA256) != 64 {
			t.Fatalf("resolved %+v %+v", r, r.Executable)
		}
	})
	t.Run("interpreter without pytest", func(t *testing.T) {
		// A fresh venv: pytest is installed next to flameox's tests (the
		// project venv) but not in this interpreter, which must not count.
		venv := t.TempDir()
		if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
			t.Fatalf("venv: %v %s", err, out)
		}
		bare := filepath.Join(venv, "bin", "python")
		_, err := resolve(ctx, &capture.Request{Argv: []string{bare, "-m", "pytest", "t"}, Cwd: t.TempDir()})
		f := failure(t, err, evidence.CodeProviderUnavailable)
		want := []string{bare, "-m", "pip", "install", "pytest>=8.3"}
		if f.Retry == nil || !slices.Equal(f.Retry.Argv, want) {
			t.Fatalf("retry %+v, want argv %q", f.Retry, want)
		}
		if !strings.Contains(f.Message, bare+" -m pip install 'pytest>=8.3'") || !strings.Contains(f.Message, "ModuleNotFoundError") {
			t.Fatalf("message lacks the exact remedy: %s", f.Message)
		}
	})
	t.Run("pytest too old", func(t *testing.T) {
		// The probe imports what the workload would: a pytest module in the
		// working directory shadows the installed one.
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "pytest.py"), []byte("__version__ = '8.2.2'\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := resolve(ctx, &capture.Request{Argv: []string{py, "-m", "pytest", "t"}, Cwd: dir})
		f := failure(t, err, evidence.CodeProviderUnavailable)
		if !strings.Contains(f.Message, "pytest 8.2.2") || f.Details["pytest_version"] != "8.2.2" {
			t.Fatalf("message %s details %v", f.Message, f.Details)
		}
	})
	t.Run("missing interpreter", func(t *testing.T) {
		_, err := resolve(ctx, &capture.Request{Argv: []string{"./no-such-python", "-m", "pytest", "t"}, Cwd: t.TempDir()})
		failure(t, err, evidence.CodeInvalidArgument)
		_, err = resolve(ctx, &capture.Request{Argv: []string{"no-such-python-on-path", "-m", "pytest", "t"}, Cwd: t.TempDir()})
		failure(t, err, evidence.CodeInvalidArgument)
	})
	t.Run("not a Python interpreter", func(t *testing.T) {
		sh, err := exec.LookPath("true")
		if err != nil {
			t.Skip("needs true(1)")
		}
		_, err = resolve(ctx, &capture.Request{Argv: []string{sh, "-m", "pytest", "t"}, Cwd: t.TempDir()})
		failure(t, err, evidence.CodeInvalidArgument)
	})
}

func TestPlan(t *testing.T) {
	scratch := t.TempDir()
	t.Setenv("PYTHONPATH", "/existing/path")
	req := &capture.Request{Provider: Name, Argv: []string{"python3", "-m", "pytest", "-q", "tests"}, Cwd: "/work"}
	p, err := plan(req, scratch, &capture.Resolved{Executable: &evidence.Executable{Path: "/usr/bin/python3"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/usr/bin/python3", "-m", "pytest", "-p", PluginName, "-q", "tests"}; !slices.Equal(p.Command, want) {
		t.Fatalf("command %q, want %q", p.Command, want)
	}
	if !slices.Equal(p.AcceptExit, []int{0, 1, 5}) || p.Dir != "/work" {
		t.Fatalf("accept %v dir %s", p.AcceptExit, p.Dir)
	}
	events := filepath.Join(p.OutputDir, EventsFile)
	zipPath := filepath.Join(scratch, SupportDir, PluginZip)
	if !slices.Contains(p.Env, EventsEnv+"="+events) || !slices.Contains(p.Env, "PYTHONPATH="+zipPath+":/existing/path") {
		t.Fatalf("env %q", p.Env)
	}
	// The plugin can never count as workload output: it is outside the
	// output directory and no declared role matches it.
	for _, s := range p.Support {
		if rel, err := filepath.Rel(p.OutputDir, s.Path); err == nil && !strings.HasPrefix(rel, "..") {
			t.Fatalf("support file %s inside the output dir %s", s.Path, p.OutputDir)
		}
		for _, r := range Provider.Artifacts {
			if ok, _ := filepath.Match(r.Pattern, filepath.Base(s.Path)); ok {
				t.Fatalf("support file %s matches role %s", s.Path, r.Role)
			}
		}
	}
	if ok, _ := filepath.Match(Provider.Artifacts[0].Pattern, EventsFile); !ok {
		t.Fatal("the role pattern does not match the events file")
	}
	if _, err := plan(&capture.Request{Argv: []string{"python3", "t.py"}}, scratch, nil); err == nil {
		t.Fatal("plan accepted a non-pytest argv")
	}
}

// files lists every file under dir with its size.
func files(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			out[p] = info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runPlan does what the capture runtime does with a plan: place the support
// files, take the output baseline, run the command.
func runPlan(t *testing.T, argv []string, cwd string) (*capture.Plan, string, int, map[string]int64) {
	t.Helper()
	req := &capture.Request{Provider: Name, Argv: argv, Cwd: cwd}
	r, err := Provider.Resolve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	p, err := Provider.Plan(req, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Support {
		if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Path, s.Content, fs.FileMode(s.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(p.OutputDir, 0o755); err != nil {
		t.Fatal(err)
	}
	baseline := files(t, scratch)
	cmd := exec.Command(p.Command[0], p.Command[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Dir = p.Dir
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.AcceptExit, code) {
		t.Fatalf("pytest exited %d, not accepted: %s", code, out)
	}
	// The only growth anywhere in the scratch is the declared artifact.
	after := files(t, scratch)
	for f, size := range baseline {
		if after[f] != size {
			t.Fatalf("support file %s changed during the run", f)
		}
	}
	for f := range after {
		if _, ok := baseline[f]; !ok && f != filepath.Join(p.OutputDir, EventsFile) {
			t.Fatalf("the run added %s to the scratch", f)
		}
	}
	return p, scratch, code, baseline
}

func copySuite(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join(repoRoot, "testdata", "pytest-suite")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func decodeEvents(t *testing.T, path string) *formatstest.Table {
	t.Helper()
	s, err := formatstest.DecodeFile(t, pytestevents.Spec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.Tables[0]
}

// TestCaptureRun runs the plan's command with real pytest and checks the
// decoded failure identities against pytest's JUnit XML of the same run.
func TestCaptureRun(t *testing.T) {
	py := venvPython(t)
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"serial", nil},
		{"xdist", []string{"-n", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			suite := copySuite(t)
			junit := filepath.Join(t.TempDir(), "junit.xml")
			argv := append([]string{py, "-m", "pytest", "--continue-on-collection-errors", "--junitxml=" + junit}, c.extra...)
			argv = append(argv, ".")
			p, _, code, _ := runPlan(t, argv, suite)
			if code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			s := decodeEvents(t, filepath.Join(p.OutputDir, EventsFile))
			if !s.Summary.Complete {
				t.Fatalf("incomplete: %q", s.Summary.Limitations)
			}
			raw, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			want := junitFailures(t, raw)
			var got []string
			workers := map[any]bool{}
			for _, r := range s.Rows {
				switch r["outcome"] {
				case table.OutcomeFailed:
					got = append(got, junitName(r["nodeid"].(string))+" failure")
				case table.OutcomeError:
					got = append(got, junitName(r["nodeid"].(string))+" error")
				}
				if r["kind"] == table.KindTest {
					workers[r["worker"]] = true
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("failures differ\njunit: %q\nours:  %q", want, got)
			}
			if c.name == "xdist" && (len(workers) != 2 || !workers["gw0"] || !workers["gw1"]) {
				t.Fatalf("workers %v", workers)
			}
		})
	}
	t.Run("no tests collected", func(t *testing.T) {
		suite := copySuite(t)
		_, _, code, _ := runPlan(t, []string{py, "-m", "pytest", "-k", "no_such_test_name", "test_outcomes.py"}, suite)
		if code != 5 {
			t.Fatalf("exit %d, want 5", code)
		}
	})
}

// junitFailures lists pytest's JUnit XML testcases that failed or errored,
// as "classname|name failure" and "classname|name error", sorted.
func junitFailures(t *testing.T, raw []byte) []string {
	t.Helper()
	var doc struct {
		Suites []struct {
			Cases []struct {
				Classname string    `xml:"classname,attr"`
				Name      string    `xml:"name,attr"`
				Failure   *struct{} `xml:"failure"`
				Error     *struct{} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				out = append(out, c.Classname+"|"+c.Name+" failure")
			case c.Error != nil:
				out = append(out, c.Classname+"|"+c.Name+" error")
			}
		}
	}
	slices.Sort(out)
	return out
}

// junitName maps a node id to JUnit's classname|name as pytest's junitxml
// plugin does: path segments dotted, ".py" dropped, parameters kept.
func junitName(nodeid string) string {
	path, params, hasParams := strings.Cut(nodeid, "[")
	names := strings.Split(path, "::")
	names[0] = strings.TrimSuffix(strings.ReplaceAll(names[0], "/", "."), ".py")
	if hasParams {
		names[len(names)-1] += "[" + params
	}
	return strings.Join(names[:len(names)-1], ".") + "|" + names[len(names)-1]
}

// worstCase feeds the plugin's hooks fake reports whose every text field is
// far beyond its bound and made of the characters that expand most in JSON
// (control characters, six bytes each; four-byte characters; lone
// surrogates), and prints the longest line written.
const worstCase = `
import os, sys, types, json
import flameox_pytest as fp
path = sys.argv[1]
w = fp._Writer(path)
huge = ("\x01\U0001F600\udc80\"" * 40000)
args = [huge] * 500
config = types.SimpleNamespace(
    invocation_params=types.SimpleNamespace(args=args, dir=huge),
    rootpath=huge, pluginmanager=None)
rec = fp._Recorder(config, w)
rec.start()
crash = types.SimpleNamespace(message=huge)
longrepr = types.SimpleNamespace(reprcrash=crash, toterminal=None)
def report(when, outcome):
    return types.SimpleNamespace(nodeid=huge, when=when, outcome=outcome + huge, passed=False,
        longrepr=longrepr, longreprtext=huge, duration=1.5, location=(huge, 3, huge),
        wasxfail=huge, worker_id=huge, flameox_fixtures=[[huge, huge, 0.1, "passed"]])
rec.pytest_runtest_logreport(report("setup", "failed"))
rec.pytest_runtest_logreport(report("???", "failed"))
rec.pytest_collectreport(types.SimpleNamespace(nodeid=huge, outcome="failed" + huge, passed=False, longrepr=longrepr, longreprtext=huge))
node = types.SimpleNamespace(gateway=types.SimpleNamespace(id=huge), workerinfo={"version_info": (huge, huge, huge)})
rec.pytest_testnodeready(node)
rec.pytest_testnodedown(node, huge)
rec.pytest_keyboard_interrupt(types.SimpleNamespace(typename=huge, value=huge))
rec.pytest_internalerror(huge, None)
rec._items([huge, huge + "x"], huge, None)
w.close()
lines = open(path, "rb").read().split(b"\n")[:-1]
ids = [json.loads(l).get("nodeid") for l in lines if b'"collect_item"' in l]
print(json.dumps({"lines": len(lines), "longest": max(len(l) + 1 for l in lines), "distinct_ids": len(set(ids))}))
`

func TestPluginLineBound(t *testing.T) {
	py := venvPython(t)
	out := filepath.Join(t.TempDir(), "events")
	cmd := exec.Command(py, "-c", worstCase, out)
	cmd.Env = append(os.Environ(), "PYTHONPATH=.", "PYTHONDONTWRITEBYTECODE=1")
	raw, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var res struct {
		Lines, Longest int
		DistinctIDs    int `json:"distinct_ids"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if res.Lines != 12 || res.Longest > pytestevents.MaxLine || res.DistinctIDs != 2 {
		t.Fatalf("%+v: want 12 lines of at most %d bytes and two distinct bounded ids", res, pytestevents.MaxLine)
	}
	t.Logf("longest worst-case line: %d bytes", res.Longest)
}
