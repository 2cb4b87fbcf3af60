package parquetpreview

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Records are rebuilt from the leaf columns' repetition and definition
// levels (Dremel record assembly) over the footer's own schema tree, so the
// values shown are the native ones: no Go struct mapping, no time.Time
// conversion. LIST and MAP annotations are unwrapped into arrays (a MAP
// into an array of {key, value} objects); everything else keeps its shape.

// assembler rebuilds one row at a time.
type assembler struct {
	root *node
	// invalidText counts text-annotated values that were not UTF-8 and are
	// shown as tagged bytes instead.
	invalidText int64
}

// row assembles the top-level object of one row from per-column values.
func (a *assembler) row(cols [][]parquet.Value) (evidence.Object, error) {
	obj := evidence.Object{}
	off := 0
	for _, c := range a.root.children {
		n := leafCount(c)
		v, err := a.value(c, cols[off:off+n])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.dotted(), err)
		}
		obj[c.name] = v
		off += n
	}
	return obj, nil
}

func leafCount(n *node) int {
	if n.leaf() {
		return 1
	}
	c := 0
	for _, k := range n.children {
		c += leafCount(k)
	}
	return c
}

// value assembles node n from the values of its leaves that belong to one
// instance of n's parent.
func (a *assembler) value(n *node, cols [][]parquet.Value) (any, error) {
	if len(cols) == 0 {
		return evidence.Object{}, nil // a group without columns
	}
	if len(cols[0]) == 0 {
		return nil, fmt.Errorf("no values at %s", n.dotted())
	}
	if n.repetition() != format.Repeated {
		return a.single(n, cols)
	}
	if cols[0][0].DefinitionLevel() < n.maxDef {
		return []any{}, nil
	}
	// Split every leaf's values into n's instances: an instance starts at a
	// value whose repetition level is at most n's.
	parts := make([][][]parquet.Value, len(cols))
	count := -1
	for i, col := range cols {
		start := 0
		for j := 1; j <= len(col); j++ {
			if j == len(col) || col[j].RepetitionLevel() <= n.maxRep {
				parts[i] = append(parts[i], col[start:j])
				start = j
			}
		}
		if count >= 0 && len(parts[i]) != count {
			return nil, fmt.Errorf("leaves of %s disagree on its repetition count (%d, %d)", n.dotted(), count, len(parts[i]))
		}
		count = len(parts[i])
	}
	arr := make([]any, count)
	inst := make([][]parquet.Value, len(cols))
	for k := range count {
		for i := range cols {
			inst[i] = parts[i][k]
		}
		v, err := a.single(n, inst)
		if err != nil {
			return nil, err
		}
		arr[k] = v
	}
	return arr, nil
}

// single assembles one present-or-null instance of n.
func (a *assembler) single(n *node, cols [][]parquet.Value) (any, error) {
	if cols[0][0].DefinitionLevel() < n.maxDef {
		return nil, nil
	}
	if n.leaf() {
		return a.leafValue(n, cols[0][0])
	}
	obj := evidence.Object{}
	off := 0
	for _, c := range n.children {
		k := leafCount(c)
		v, err := a.value(c, cols[off:off+k])
		if err != nil {
			return nil, err
		}
		obj[c.name] = v
		off += k
	}
	switch n.annotation() {
	case list:
		return unwrapList(n, obj), nil
	case mapping:
		if len(n.children) == 1 {
			return obj[n.children[0].name], nil
		}
	}
	return obj, nil
}

// unwrapList applies the LIST backward-compatibility rules: the repeated
// child is the element unless it is a group of exactly one field (and not
// the legacy "array" / "<name>_tuple" forms), in which case that field is.
func unwrapList(n *node, obj evidence.Object) any {
	if len(n.children) != 1 {
		return obj
	}
	rep := n.children[0]
	items, _ := obj[rep.name].([]any)
	if rep.leaf() || len(rep.children) != 1 || rep.name == "array" || rep.name == n.name+"_tuple" {
		return items
	}
	elem := rep.children[0].name
	out := make([]any, len(items))
	for i, it := range items {
		if o, ok := it.(evidence.Object); ok {
			out[i] = o[elem]
		}
	}
	return out
}

// leafValue converts one physical value to the canonical domain.
func (a *assembler) leafValue(n *node, v parquet.Value) (any, error) {
	ann := n.annotation()
	switch v.Kind() {
	case parquet.Boolean:
		return v.Boolean(), nil
	case parquet.Int32:
		switch ann {
		case unsigned:
			return uint32(v.Int32()), nil
		case decimal:
			return decimalString(big.NewInt(int64(v.Int32())), n.scale()), nil
		}
		return int64(v.Int32()), nil
	case parquet.Int64:
		switch ann {
		case unsigned:
			return uint64(v.Int64()), nil
		case decimal:
			return decimalString(big.NewInt(v.Int64()), n.scale()), nil
		}
		return v.Int64(), nil
	case parquet.Int96:
		b := make([]byte, 12)
		for i, w := range v.Int96() {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		return taggedBytes(b), nil
	case parquet.Float:
		return float64(v.Float()), nil
	case parquet.Double:
		return v.Double(), nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		switch ann {
		case text:
			if utf8.Valid(b) {
				return string(b), nil
			}
			a.invalidText++
		case decimal:
			return decimalString(twosComplement(b), n.scale()), nil
		case uuid:
			if len(b) == 16 {
				return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
			}
		}
		return taggedBytes(b), nil
	}
	return nil, fmt.Errorf("value of unknown kind %v", v.Kind())
}

// taggedBytes is how binary values travel in canonical JSON.
func taggedBytes(b []byte) evidence.Object {
	return evidence.Object{"type": "bytes", "base64": base64.StdEncoding.EncodeToString(b)}
}

// twosComplement reads a big-endian two's complement integer.
func twosComplement(b []byte) *big.Int {
	z := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		z.Sub(z, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return z
}

// decimalString writes unscaled × 10^-scale exactly.
func decimalString(unscaled *big.Int, scale int32) string {
	neg := unscaled.Sign() < 0
	digits := new(big.Int).Abs(unscaled).String()
	if scale > 0 {
		if len(digits) <= int(scale) {
			digits = strings.Repeat("0", int(scale)+1-len(digits)) + digits
		}
		digits = digits[:len(digits)-int(scale)] + "." + digits[len(digits)-int(scale):]
	} else if scale < 0 {
		digits += strings.Repeat("0", -int(scale))
	}
	if neg {
		return "-" + digits
	}
	return digits
}
