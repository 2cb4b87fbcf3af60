// Package pathglob matches slash-separated paths against include/exclude
// patterns for projections that filter by source location.
//
// A pattern is a slash-separated glob: `*`, `?` and `[...]` match within
// one segment (as path.Match), `**` matches any number of segments, and a
// pattern that matches a directory matches everything below it ("pkg"
// selects "pkg/a.go" and "pkg/x/b.go").
//
// It imports the standard library only.
package pathglob

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Pattern is one compiled pattern.
type Pattern struct {
	text string
	segs []string
}

// Compile checks a pattern's syntax.
func Compile(p string) (Pattern, error) {
	if p == "" {
		return Pattern{}, errors.New("empty pattern")
	}
	if p == "." {
		// The root itself: everything below it.
		return Pattern{text: p}, nil
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return Pattern{}, fmt.Errorf("pattern %q: %w", p, err)
		}
	}
	return Pattern{text: p, segs: segs}, nil
}

func (p Pattern) String() string { return p.text }

// Match reports whether the pattern matches path or one of its parent
// directories.
func (p Pattern) Match(name string) bool {
	return match(p.segs, strings.Split(name, "/"))
}

// match reports whether pat matches a prefix of segs (a whole path, or a
// directory above it).
func match(pat, segs []string) bool {
	if len(pat) == 0 {
		return true
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if match(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], segs[0]); !ok {
		return false
	}
	return match(pat[1:], segs[1:])
}

// Set is an include and exclude list: a path is selected when it matches
// some include (or there are none) and no exclude.
type Set struct {
	Include, Exclude []Pattern
}

// CompileSet compiles include and exclude lists.
func CompileSet(include, exclude []string) (*Set, error) {
	s := &Set{}
	for _, p := range include {
		c, err := Compile(p)
		if err != nil {
			return nil, err
		}
		s.Include = append(s.Include, c)
	}
	for _, p := range exclude {
		c, err := Compile(p)
		if err != nil {
			return nil, err
		}
		s.Exclude = append(s.Exclude, c)
	}
	return s, nil
}

// Selects reports whether name passes the set.
func (s *Set) Selects(name string) bool {
	if len(s.Include) > 0 {
		in := false
		for _, p := range s.Include {
			if p.Match(name) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	for _, p := range s.Exclude {
		if p.Match(name) {
			return false
		}
	}
	return true
}

// Empty reports whether the set filters nothing.
func (s *Set) Empty() bool { return len(s.Include) == 0 && len(s.Exclude) == 0 }

// UnderRoot turns a pattern into one relative to root (an absolute, clean
// directory): an absolute pattern must lie inside the root, and no pattern
// may hold a ".." segment, so a filter can never reach outside the root.
func UnderRoot(root, p string) (string, error) {
	if p == "" {
		return "", errors.New("empty pattern")
	}
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".." {
			return "", fmt.Errorf("pattern %q: \"..\" segments are not allowed", p)
		}
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		if c != root && !strings.HasPrefix(c, root+string(filepath.Separator)) && root != string(filepath.Separator) {
			return "", fmt.Errorf("pattern %q lies outside the source root %s", p, root)
		}
		rel, err := filepath.Rel(root, c)
		if err != nil {
			return "", err
		}
		p = rel
	}
	p = path.Clean(filepath.ToSlash(p))
	return strings.TrimPrefix(p, "./"), nil
}
