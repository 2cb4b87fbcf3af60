package store

import (
	"slices"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
)

// Cond is one --where condition: an index field or a label equals a
// value, or the time of preservation is at or after (>=), or before (<),
// an instant.
type Cond struct {
	Key, Value string
	Op         string // "=", ">=" or "<"
	at         time.Time
}

// Created is the --where key of the time of preservation.
const Created = "created"

// ParseWhere reads "KEY=VALUE", "created>=TIME" or "created<TIME". KEY is a
// label name or one of Fields (host, provider, format, outcome, table,
// bundle_id); a list field (provider, format, outcome, table) matches when
// it holds the value. TIME is RFC 3339 (2026-11-24T00:00:00Z) or a date
// (2026-11-24, midnight UTC).
func ParseWhere(s string) (Cond, error) {
	for _, op := range []string{">=", "<"} {
		if k, v, ok := strings.Cut(s, op); ok && k == Created {
			at, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				at, err = time.Parse(time.DateOnly, v)
			}
			if err != nil {
				f := evidence.Failf(evidence.CodeInvalidArgument, "where %q: %q is not an RFC 3339 time or a date (2026-11-24)", s, v)
				f.Location.Field = "where"
				return Cond{}, f
			}
			return Cond{Key: Created, Value: v, Op: op, at: at.UTC()}, nil
		}
	}
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		f := evidence.Failf(evidence.CodeInvalidArgument, "where %q: want KEY=VALUE, KEY a label or one of %s", s, strings.Join(Fields, ", "))
		f.Location.Field = "where"
		return Cond{}, f
	}
	if k == Created {
		f := evidence.Failf(evidence.CodeInvalidArgument, "where %q: created takes a range: created>=TIME or created<TIME", s)
		f.Location.Field = "where"
		return Cond{}, f
	}
	if !slices.Contains(Fields, k) && !labelKey.MatchString(k) {
		f := evidence.Failf(evidence.CodeInvalidArgument, "where %q: %q is neither an index field (%s) nor a label name", s, k, strings.Join(Fields, ", "))
		f.Location.Field = "where"
		return Cond{}, f
	}
	return Cond{Key: k, Value: v, Op: "="}, nil
}

// String returns the condition as it is written.
func (c Cond) String() string {
	if c.Op == "" {
		return c.Key + "=" + c.Value
	}
	return c.Key + c.Op + c.Value
}

// Match reports whether entry e meets c.
func (c Cond) Match(e *Entry) bool {
	switch c.Op {
	case ">=":
		return !e.Created.Before(c.at)
	case "<":
		return e.Created.Before(c.at)
	}
	switch c.Key {
	case "bundle_id":
		return e.BundleID == c.Value || strings.TrimPrefix(e.BundleID, "sha256:") == c.Value
	case "host":
		return e.Host == c.Value
	case "provider":
		return slices.Contains(e.Providers, c.Value)
	case "format":
		return slices.Contains(e.Formats, c.Value)
	case "outcome":
		return slices.Contains(e.Outcomes, c.Value)
	case "table":
		return slices.Contains(e.Tables, c.Value)
	}
	v, ok := e.Labels[c.Key]
	return ok && v == c.Value
}

// Selection is the bundles of a store that a set of conditions admits.
type Selection struct {
	IDs []bundle.ID // admitted, sorted
	// Published is every bundle of the store; Unindexed those with no
	// index entry (a crash between publication and indexing, or a bundle
	// copied in by hand): with conditions they cannot be admitted, since
	// nothing is known of their labels.
	Published, Unindexed int
}

// Select admits the bundles of store one of whose index entries meets
// every condition; without conditions, every published bundle. An index
// entry naming a bundle the store does not hold is INTEGRITY_FAILURE.
func Select(store string, where []Cond) (*Selection, error) {
	ids, err := Bundles(store)
	if err != nil {
		return nil, err
	}
	entries, err := Entries(store)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(ids))
	for _, id := range ids {
		have[id.String()] = true
	}
	indexed := map[string]bool{}
	admitted := map[string]bool{}
	for _, e := range entries {
		if !have[e.BundleID] {
			return nil, evidence.Failf(evidence.CodeIntegrity, "the index names bundle %s, which the store does not hold", e.BundleID).At(e.path, "")
		}
		indexed[e.BundleID] = true
		if matchAll(where, e) {
			admitted[e.BundleID] = true
		}
	}
	s := &Selection{Published: len(ids)}
	for _, id := range ids {
		if !indexed[id.String()] {
			s.Unindexed++
		}
		if len(where) == 0 || admitted[id.String()] {
			s.IDs = append(s.IDs, id)
		}
	}
	return s, nil
}

func matchAll(where []Cond, e *Entry) bool {
	for _, c := range where {
		if !c.Match(e) {
			return false
		}
	}
	return true
}
