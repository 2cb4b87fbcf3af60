package main

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/store"
)

// fleet reads --bundles and --where: nil when --bundles is not given.
func fleet(dir string, where []string, paths int) (*rank.Fleet, error) {
	if dir == "" {
		if len(where) > 0 {
			return nil, argument("where", "--where selects bundles: give --bundles STORE too")
		}
		return nil, nil
	}
	if paths > 0 {
		return nil, argument("bundles", "--bundles ranks a store's preserved tables: give it or PATH arguments, not both")
	}
	fl := &rank.Fleet{Store: dir}
	for _, w := range where {
		c, err := store.ParseWhere(w)
		if err != nil {
			return nil, err
		}
		fl.Where = append(fl.Where, c)
	}
	return fl, nil
}

func argument(field, msg string) error {
	f := evidence.Failf(evidence.CodeInvalidArgument, "%s", msg)
	f.Location.Field = field
	return f
}
