package python

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	kv "github.com/flameox/flameox/pkg/kernelvalidation"
)

// The embedded kernel validation SDK is the file, and what it writes the
// Go grammar accepts; what it refuses it refuses before writing.
func TestValidateModule(t *testing.T) {
	src, err := os.ReadFile("flameox_validate.py")
	if err != nil || !bytes.Equal(src, ValidateModule()) {
		t.Fatal("the embedded module is not flameox_validate.py")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ValidateModuleName+".py"), ValidateModule(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.jsonl")
	script := `
import flameox_validate as fv, os
open("console.txt", "w").write("checked\n")
w = fv.open(producer="sdk-test")
w.compare("v", [1.0, 2.0], [1.0, 2.5], atol=0.1, rtol=0.0, console="console.txt")
w.record("s", "pass", expected=True, observed=True, shape=[2, 3], dtype="bool")
for bad in (dict(status="maybe"), dict(status="unsupported"), dict(status="pass", observed=float("nan")),
            dict(status="pass", shape=[-1]), dict(status="pass", observed=[1, 2]), dict(status="pass", reason="\ud800")):
    try:
        w.record("x", **bad)
    except fv.ValidationError:
        pass
    else:
        raise SystemExit("accepted %r" % (bad,))
w.close()
`
	cmd := exec.Command(python(t), "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1", kv.EnvVar+"="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%s", raw)
	}
	r, err := kv.ParseReceipt(lines[0])
	if err != nil || r.Status != kv.Fail || r.Console == nil || r.Console.Bytes != 8 || r.Producer.Name != "sdk-test" {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := kv.ParseReceipt(lines[1]); err != nil || r.Observed != true || len(r.Shape) != 2 {
		t.Fatalf("%+v %v", r, err)
	}
}
