package bundle

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// repoRoot finds the module root from the package directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	must(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// TestWriterVersions fails when go.mod moves parquet-go or klauspost/compress
// away from the versions recorded in manifests: an upgrade can change the
// encoded bytes and so the ids of new bundles, and must be a deliberate edit
// of the constants (and a line in docs/bundles.md).
func TestWriterVersions(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for mod, want := range map[string]string{parquetModule: parquetVersion, zstdModule: zstdVersion} {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", mod)
		cmd.Dir = repoRoot(t)
		out, err := cmd.Output()
		must(t, err)
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("go.mod has %s %s, manifests record %s", mod, got, want)
		}
	}
}

// pyarrowScript prints the file's units metadata, its compression codecs,
// then every row as JSON, non-finite doubles tagged as flameox writes them
// and json columns parsed.
const pyarrowScript = `
import json, math, sys
import pyarrow.parquet as pq
path, json_cols = sys.argv[1], set(sys.argv[2].split(",")) - {""}
meta = pq.read_metadata(path)
print(meta.metadata[b"flameox.units"].decode())
print(json.dumps(sorted({meta.row_group(g).column(c).compression for g in range(meta.num_row_groups) for c in range(meta.num_columns)})))
def fix(v):
    if isinstance(v, float) and not math.isfinite(v):
        return {"type": "double", "value": "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}
    return v
for row in pq.read_table(path).to_pylist():
    print(json.dumps({k: (json.loads(v) if k in json_cols and v is not None else fix(v)) for k, v in row.items()}, ensure_ascii=False))
`

// TestPyArrowReadsTables checks our Parquet against an independent reader:
// Apache Arrow's. Rows, units and codec must be what we wrote.
func TestPyArrowReadsTables(t *testing.T) {
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(repoRoot(t), ".venv")
	}
	py := filepath.Join(venv, "bin", "python")
	if err := exec.Command(py, "-c", "import pyarrow").Run(); err != nil {
		t.Skipf("pyarrow is not installed in %s (pip install -r tools/requirements.txt): %v", venv, err)
	}
	src, store := t.TempDir(), t.TempDir()
	e := sampleEvidence(t, src)
	bl := e.build(t, store)
	r, err := Open(bl.Path)
	must(t, err)
	tab := r.Manifest.Tables[0]
	var jsonCols []string
	for _, c := range tab.Header.Columns {
		if c.Type == evidence.TypeJSON {
			jsonCols = append(jsonCols, c.Name)
		}
	}
	cmd := exec.Command(py, "-c", pyarrowScript, filepath.Join(bl.Path, tab.Path), strings.Join(jsonCols, ","))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Scan()
	if got, want := sc.Text(), canon(t, unitsOf(e.table)); got != want {
		t.Errorf("pyarrow reads units %s, want %s", got, want)
	}
	sc.Scan()
	if got := sc.Text(); got != `["ZSTD"]` {
		t.Errorf("pyarrow reads codecs %s, want [\"ZSTD\"]", got)
	}
	i := 0
	for sc.Scan() {
		v, err := evidence.ParseValue(sc.Bytes(), 0)
		must(t, err)
		if i >= len(e.rows) {
			t.Fatalf("pyarrow reads more than %d rows", len(e.rows))
		}
		if got, want := canon(t, v), canon(t, e.rows[i]); got != want {
			t.Errorf("pyarrow row %d: %s, want %s", i, got, want)
		}
		i++
	}
	if i != len(e.rows) {
		t.Errorf("pyarrow reads %d rows, want %d", i, len(e.rows))
	}
}
