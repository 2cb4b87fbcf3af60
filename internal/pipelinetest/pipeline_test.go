// Package pipelinetest runs the built flameox binaries the way users do,
// through testscript files in testdata/script.
package pipelinetest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/wire"
)

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flameox-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "../../cmd/...")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build binaries:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestScripts(t *testing.T) {
	root, _ := filepath.Abs("../..")
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join(root, "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("REPO", root)
			env.Setenv("HOME", env.WorkDir)
			if v := os.Getenv("FLAMEOX_HOME"); v != "" {
				env.Setenv("FLAMEOX_HOME", v)
			}
			env.Setenv("FLAMEOX_VENV", venv(root))
			// A venv with torch (regen-only: GBs from PyPI), for the
			// torch-profiler pipeline; unset, that script skips.
			env.Setenv("FLAMEOX_TORCH_VENV", os.Getenv("FLAMEOX_TORCH_VENV"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":    cmdStatus,
			"canonical": cmdCanonical,
			"block":     cmdBlock,
		},
		Condition: func(cond string) (bool, error) {
			if cond == "venv" {
				_, err := os.Stat(filepath.Join(venv(root), "bin", "python"))
				return err == nil, nil
			}
			if cond == "torch" {
				v := os.Getenv("FLAMEOX_TORCH_VENV")
				_, err := os.Stat(filepath.Join(v, "bin", "python"))
				return v != "" && err == nil, nil
			}
			if tool, ok := strings.CutPrefix(cond, "tool:"); ok {
				_, err := exec.LookPath(tool)
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// venv is the project virtualenv with the pinned Python collectors.
func venv(root string) string {
	if v := os.Getenv("FLAMEOX_VENV"); v != "" {
		return v
	}
	return filepath.Join(root, ".venv")
}

// status N prog args...: run prog and require exit status N; stdout and
// stderr are kept for later assertions, like exec.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("status: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d\nstderr: %s", args[1], got, want, ts.ReadFile("stderr"))
	}
}

// canonical [file]: every line of stdout (or file) is a canonical block.
func cmdCanonical(ts *testscript.TestScript, neg bool, args []string) {
	src := "stdout"
	if len(args) > 0 {
		src = args[0]
	}
	sc := bufio.NewScanner(strings.NewReader(ts.ReadFile(src)))
	sc.Buffer(nil, wire.DefaultMaxLine)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		v, err := evidence.ParseValue(line, 64)
		if err != nil {
			ts.Fatalf("line %d is not JSON: %v", n, err)
		}
		c, err := evidence.Canonical(v)
		if err != nil || !bytes.Equal(c, line) {
			ts.Fatalf("line %d is not canonical:\n%s\n%s", n, line, c)
		}
		if o, _ := v.(evidence.Object); o == nil || o["schema"] != evidence.Schema {
			ts.Fatalf("line %d has no %s schema", n, evidence.Schema)
		}
	}
	if n == 0 && !neg {
		ts.Fatalf("%s is empty", src)
	}
}

// block KIND N [field=value ...]: stdout has exactly N blocks of KIND, and
// the first of them has the given top-level (or values.x) fields.
func cmdBlock(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: block KIND N [field=value ...]")
	}
	want, _ := strconv.Atoi(args[1])
	var first evidence.Object
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(ts.ReadFile("stdout")), "\n") {
		if line == "" {
			continue
		}
		v, err := evidence.ParseValue([]byte(line), 64)
		if err != nil {
			ts.Fatalf("bad line: %v", err)
		}
		o := v.(evidence.Object)
		if o["kind"] == args[0] {
			if n == 0 {
				first = o
			}
			n++
		}
	}
	if (n == want) == neg {
		ts.Fatalf("%d %s blocks, want %d", n, args[0], want)
	}
	for _, kv := range args[2:] {
		k, v, _ := strings.Cut(kv, "=")
		var got any
		if vk, ok := strings.CutPrefix(k, "values."); ok {
			vals, _ := first["values"].(evidence.Object)
			got = vals[vk]
		} else {
			got = first[k]
		}
		if fmt.Sprint(got) != v {
			ts.Fatalf("first %s block: %s = %v, want %s", args[0], k, got, v)
		}
	}
}
