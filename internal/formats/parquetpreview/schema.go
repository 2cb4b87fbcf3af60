package parquetpreview

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// node is one element of the file's schema tree, as its footer declares it.
type node struct {
	el       *format.SchemaElement
	name     string
	children []*node
	column   int // leaf column index; -1 for groups
	path     []string
	maxDef   int // definition level when this node is present
	maxRep   int // repetition level of this node's instances
}

func (n *node) leaf() bool { return n.column >= 0 }

func (n *node) repetition() format.FieldRepetitionType {
	r, _ := n.el.RepetitionType.Get()
	return r
}

// buildSchema rebuilds the tree from the footer's depth-first element list
// and checks its shape: every child count is honoured and nothing is left
// over.
func buildSchema(els []format.SchemaElement) (*node, []*node, error) {
	if len(els) == 0 {
		return nil, nil, fmt.Errorf("the footer declares no schema")
	}
	i := 0
	var leaves []*node
	var build func(parent *node, depth int) (*node, error)
	build = func(parent *node, depth int) (*node, error) {
		if i >= len(els) {
			return nil, fmt.Errorf("schema element %d is missing: a child count exceeds the element list", i)
		}
		if depth > 100 {
			return nil, fmt.Errorf("schema nests more than 100 levels")
		}
		el := &els[i]
		i++
		if !utf8.ValidString(el.Name) {
			return nil, fmt.Errorf("schema element %d has a name that is not valid UTF-8", i-1)
		}
		n := &node{el: el, name: el.Name, column: -1}
		if parent != nil {
			n.path = append(append([]string{}, parent.path...), el.Name)
			n.maxDef, n.maxRep = parent.maxDef, parent.maxRep
			switch n.repetition() {
			case format.Optional:
				n.maxDef++
			case format.Repeated:
				n.maxDef++
				n.maxRep++
			}
		}
		kids, hasKids := el.NumChildren.Get()
		if _, typed := el.Type.Get(); !hasKids || kids == 0 && typed {
			if parent == nil {
				return nil, fmt.Errorf("the schema root is not a group")
			}
			if !typed {
				return nil, fmt.Errorf("schema element %q has neither a type nor children", el.Name)
			}
			n.column = len(leaves)
			leaves = append(leaves, n)
			return n, nil
		}
		if kids < 0 || int(kids) > len(els)-i {
			return nil, fmt.Errorf("schema element %q declares %d children, more than remain", el.Name, kids)
		}
		names := map[string]bool{}
		for range kids {
			c, err := build(n, depth+1)
			if err != nil {
				return nil, err
			}
			if names[c.name] {
				return nil, fmt.Errorf("group %q has two children named %q", el.Name, c.name)
			}
			names[c.name] = true
			n.children = append(n.children, c)
		}
		return n, nil
	}
	root, err := build(nil, 0)
	if err != nil {
		return nil, nil, err
	}
	if i != len(els) {
		return nil, nil, fmt.Errorf("%d schema elements follow the root's subtree", len(els)-i)
	}
	return root, leaves, nil
}

// physical names a leaf's physical type.
func (n *node) physical() string {
	t, _ := n.el.Type.Get()
	if t == format.FixedLenByteArray {
		l, _ := n.el.TypeLength.Get()
		return fmt.Sprintf("FIXED_LEN_BYTE_ARRAY(%d)", l)
	}
	return t.String()
}

var convertedNames = map[deprecated.ConvertedType]string{
	deprecated.UTF8: "UTF8", deprecated.Map: "MAP", deprecated.MapKeyValue: "MAP_KEY_VALUE",
	deprecated.List: "LIST", deprecated.Enum: "ENUM", deprecated.Decimal: "DECIMAL", deprecated.Date: "DATE",
	deprecated.TimeMillis: "TIME_MILLIS", deprecated.TimeMicros: "TIME_MICROS",
	deprecated.TimestampMillis: "TIMESTAMP_MILLIS", deprecated.TimestampMicros: "TIMESTAMP_MICROS",
	deprecated.Uint8: "UINT_8", deprecated.Uint16: "UINT_16", deprecated.Uint32: "UINT_32", deprecated.Uint64: "UINT_64",
	deprecated.Int8: "INT_8", deprecated.Int16: "INT_16", deprecated.Int32: "INT_32", deprecated.Int64: "INT_64",
	deprecated.Json: "JSON", deprecated.Bson: "BSON", deprecated.Interval: "INTERVAL",
}

// logical names a node's logical type, or its legacy converted type.
func (n *node) logical() string {
	if n.el.LogicalType.Value != nil {
		return n.el.LogicalType.String()
	}
	if c, ok := n.el.ConvertedType.Get(); ok {
		if name, ok := convertedNames[c]; ok {
			if c == deprecated.Decimal {
				p, _ := n.el.Precision.Get()
				s, _ := n.el.Scale.Get()
				return fmt.Sprintf("DECIMAL(%d,%d)", p, s)
			}
			return name
		}
		return fmt.Sprintf("CONVERTED(%d)", c)
	}
	return ""
}

// annotation classifies what a node's logical or converted type means for
// its values.
type annotation int

const (
	plain annotation = iota
	text             // STRING, ENUM, JSON: UTF-8 text
	list
	mapping
	decimal
	unsigned
	uuid
)

func (n *node) annotation() annotation {
	switch v := n.el.LogicalType.Value.(type) {
	case *format.StringType, *format.EnumType, *format.JsonType:
		return text
	case *format.ListType:
		return list
	case *format.MapType:
		return mapping
	case *format.DecimalType:
		return decimal
	case *format.UUIDType:
		return uuid
	case *format.IntType:
		if !v.IsSigned {
			return unsigned
		}
		return plain
	case nil:
	default:
		return plain
	}
	c, ok := n.el.ConvertedType.Get()
	if !ok {
		return plain
	}
	switch c {
	case deprecated.UTF8, deprecated.Enum, deprecated.Json:
		return text
	case deprecated.List:
		return list
	case deprecated.Map, deprecated.MapKeyValue:
		return mapping
	case deprecated.Decimal:
		return decimal
	case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
		return unsigned
	}
	return plain
}

// scale returns a decimal's scale.
func (n *node) scale() int32 {
	if d, ok := n.el.LogicalType.Value.(*format.DecimalType); ok {
		return d.Scale
	}
	s, _ := n.el.Scale.Get()
	return s
}

func (n *node) dotted() string { return strings.Join(n.path, ".") }
