package nsys

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/parquetpreview"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// member is one file of the export directory that the decoder read: its
// digest is taken before parquet-go reads it, and its identity checked
// again after, so the summary names exactly the bytes the rows came from.
type member struct {
	Name   string
	Bytes  int64
	SHA256 string
}

// export is an open parquetdir: the directory's table files by name.
type export struct {
	in  *formats.Input
	dir string
	// artifact is the path of the table that is the artifact itself, read
	// through the input's verified descriptor; "" when the directory is a
	// conversion of the artifact (an .nsys-rep), whose tables are all members.
	artifact string
	files    map[string]bool // base names of the regular .parquet files
	members  []member
	hashed   map[string]bool // members already hashed
}

var variant = regexp.MustCompile(`^(.+)_V([0-9]{1,6})$`)

func openExport(in *formats.Input, dir, artifact string) (*export, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "list the export directory %s", dir)
	}
	e := &export{in: in, dir: dir, artifact: artifact, files: map[string]bool{}, hashed: map[string]bool{}}
	for _, d := range ents {
		if n := d.Name(); strings.HasSuffix(n, ".parquet") && d.Type().IsRegular() {
			e.files[strings.TrimSuffix(n, ".parquet")] = true
		}
	}
	return e, nil
}

// resolve finds a table by its exact name, else its highest _V<n>
// variant (nsys renames a table whose schema changed incompatibly).
func (e *export) resolve(name string) (string, bool) {
	if e.files[name] {
		return name, true
	}
	best, bestN := "", -1
	for f := range e.files {
		m := variant.FindStringSubmatch(f)
		if m == nil || m[1] != name {
			continue
		}
		if n, _ := strconv.Atoi(m[2]); n > bestN {
			best, bestN = f, n
		}
	}
	return best, bestN >= 0
}

// memberList is the members read so far, as summary values.
func (e *export) memberList() []any {
	out := make([]any, 0, len(e.members))
	for _, m := range e.members {
		out = append(out, evidence.Object{"name": m.Name, "bytes": m.Bytes, "sha256": m.SHA256})
	}
	return out
}

// tableNames lists the export's tables, sorted.
func (e *export) tableNames() []string {
	out := make([]string, 0, len(e.files))
	for f := range e.files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// ptable is one open native table.
type ptable struct {
	Name string // as the export names it
	f    *os.File
	size int64
	pf   *parquet.File
	cols map[string]int
	// unsigned: the column is an unsigned integer (logical type), so its
	// physical int32/int64 bits read as uint32/uint64.
	unsigned []bool
	names    []string
	rows     int64
}

// open opens the named table file and records it as a member. The
// artifact itself (META_DATA_EXPORT) is read through the input's verified
// descriptor.
func (e *export) open(name string) (*ptable, error) {
	path := filepath.Join(e.dir, name+".parquet")
	var f *os.File
	var size int64
	if e.artifact != "" && path == e.artifact {
		f, size = e.in.File, e.in.Artifact.Size
	} else {
		var err error
		if f, size, err = formats.OpenRegular(path, ""); err != nil {
			return nil, err
		}
		// A table read for two output tables is hashed once.
		if !e.hashed[name] {
			h := sha256.New()
			n, err := io.Copy(h, io.NewSectionReader(f, 0, size))
			if err != nil {
				f.Close()
				return nil, evidence.Wrap(evidence.CodeIOFailure, err, "read %s", path).At(path, "")
			}
			e.hashed[name] = true
			e.members = append(e.members, member{Name: name + ".parquet", Bytes: n, SHA256: "sha256:" + hex.EncodeToString(h.Sum(nil))})
		}
	}
	pf, err := parquetpreview.OpenFile(e.in, f, size)
	if err != nil {
		if f != e.in.File {
			f.Close()
		}
		return nil, located(err, name, "")
	}
	t := &ptable{Name: name, f: f, size: size, pf: pf, cols: map[string]int{}, rows: pf.NumRows()}
	for i, path := range pf.Schema().Columns() {
		if len(path) != 1 {
			t.close(e)
			return nil, evidence.Failf(evidence.CodeDecodeFailure, "table %s: column %s is nested; Nsight Systems tables are flat", name, strings.Join(path, ".")).At(e.in.Artifact.Path, "")
		}
		t.cols[path[0]] = i
		t.names = append(t.names, path[0])
		lc, _ := pf.Schema().Lookup(path[0])
		t.unsigned = append(t.unsigned, unsigned(lc.Node.Type()))
	}
	return t, nil
}

func (t *ptable) close(e *export) {
	if t.f != e.in.File {
		t.f.Close()
	}
}

// located names the table (and column) a failure is about.
func located(err error, tableName, column string) error {
	var f *evidence.Failure
	if errors.As(err, &f) && f.Location.Field == "" {
		f.Location.Field = tableName
		if column != "" {
			f.Location.Field += "." + column
		}
	}
	return err
}

// each calls fn with every row's values, one per column in schema order
// (a null is a null Value), row group by row group.
func (t *ptable) each(ctx context.Context, e *export, fn func(row int64, vals []parquet.Value) error) error {
	vals := make([]parquet.Value, len(t.names))
	var index int64
	for gi, rg := range t.pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := parquetpreview.CheckRowGroup(e.in, t.f, t.pf, gi, t.size); err != nil {
			return located(err, t.Name, "")
		}
		var ferr error
		err := parquetpreview.Guarded("read rows of "+t.Name, func() error {
			rows := rg.Rows()
			defer rows.Close()
			buf := make([]parquet.Row, 64)
			for {
				n, err := rows.ReadRows(buf)
				for _, r := range buf[:n] {
					for i := range vals {
						vals[i] = parquet.Value{}
					}
					r.Range(func(ci int, vs []parquet.Value) bool {
						if ci < len(vals) && len(vs) == 1 {
							vals[ci] = vs[0]
						}
						return true
					})
					if ferr = fn(index, vals); ferr != nil {
						return nil
					}
					index++
				}
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if n == 0 {
					return fmt.Errorf("the row reader made no progress")
				}
			}
		})
		if err != nil {
			return located(err, t.Name, "")
		}
		if ferr != nil {
			return ferr
		}
	}
	return nil
}

// cell is a value of a named column of the current row.
type cell struct {
	v        parquet.Value
	unsigned bool
	present  bool // the table has the column
}

func (t *ptable) col(vals []parquet.Value, name string) cell {
	i, ok := t.cols[name]
	if !ok {
		return cell{}
	}
	return cell{v: vals[i], unsigned: t.unsigned[i], present: true}
}

func (c cell) null() bool { return !c.present || c.v.IsNull() }

// integer reads an integer cell of any physical width and signedness.
// ok is false for a null; err for a non-integer or an unsigned value
// beyond int64.
func (c cell) integer() (n int64, ok bool, err error) {
	if c.null() {
		return 0, false, nil
	}
	switch c.v.Kind() {
	case parquet.Int32:
		if c.unsigned {
			return int64(c.v.Uint32()), true, nil
		}
		return int64(c.v.Int32()), true, nil
	case parquet.Int64:
		if c.unsigned {
			u := c.v.Uint64()
			if u > math.MaxInt64 {
				return 0, false, fmt.Errorf("unsigned value %d does not fit a signed 64-bit integer", u)
			}
			return int64(u), true, nil
		}
		return c.v.Int64(), true, nil
	case parquet.Boolean:
		if c.v.Boolean() {
			return 1, true, nil
		}
		return 0, true, nil
	}
	return 0, false, fmt.Errorf("holds %s values, not integers", c.v.Kind())
}

// native is a cell as a row value: an integer, a double, a string or
// null. Unsigned values beyond int64 stay exact as decimal strings.
func (c cell) native(values *formats.Values) any {
	if c.null() {
		return nil
	}
	switch c.v.Kind() {
	case parquet.Int64:
		if c.unsigned && c.v.Uint64() > math.MaxInt64 {
			return strconv.FormatUint(c.v.Uint64(), 10)
		}
	case parquet.Float:
		return evidence.Double(float64(c.v.Float()))
	case parquet.Double:
		return evidence.Double(c.v.Double())
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return values.Bound(strings.ToValidUTF8(string(c.v.ByteArray()), "\uFFFD"))
	case parquet.Int96:
		return c.v.String()
	}
	n, _, _ := c.integer()
	return n
}

// unsigned reports an unsigned integer column, by its logical type or
// the converted type of older writers.
func unsigned(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil {
		if it, ok := lt.Value.(*format.IntType); ok {
			return !it.IsSigned
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
			return true
		}
	}
	return false
}
