package pathglob

import "testing"

func TestMatch(t *testing.T) {
	cases := []struct {
		pat, path string
		want      bool
	}{
		{"pkg", "pkg/a.go", true},
		{"pkg", "pkg/x/b.go", true},
		{"pkg", "pkgs/a.go", false},
		{"*.go", "a.go", true},
		{"*.go", "pkg/a.go", false},
		{"**/*.go", "pkg/x/a.go", true},
		{"**/*.go", "a.go", true},
		{"pkg/**/b.go", "pkg/b.go", true},
		{"pkg/**/b.go", "pkg/x/y/b.go", true},
		{"pkg/**/b.go", "other/b.go", false},
		{"/tmp/x/**", "/tmp/x/app.py", true},
		{"app.py", "/tmp/x/app.py", false},
		{"**/app.py", "/tmp/x/app.py", true},
		{"util/util.go", "util/util.go", true},
		{"src/?.js", "src/a.js", true},
	}
	for _, c := range cases {
		p, err := Compile(c.pat)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(c.path); got != c.want {
			t.Errorf("%q matches %q = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
	if _, err := Compile("a/[b"); err == nil {
		t.Error("bad pattern compiled")
	}
}

func TestSet(t *testing.T) {
	s, err := CompileSet([]string{"pkg"}, []string{"pkg/gen/**"})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{"pkg/a.go": true, "pkg/gen/x.go": false, "cmd/a.go": false} {
		if s.Selects(path) != want {
			t.Errorf("Selects(%q) != %v", path, want)
		}
	}
	empty, _ := CompileSet(nil, nil)
	if !empty.Empty() || !empty.Selects("anything") {
		t.Error("an empty set must select everything")
	}
}

func TestUnderRoot(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"pkg/*.go", "pkg/*.go", true},
		{"./pkg/", "pkg", true},
		{"/src/proj/pkg/**", "pkg/**", true},
		{"/src/proj", ".", true},
		{"/src/other/x", "", false},
		{"/src/projx", "", false},
		{"../x", "", false},
		{"pkg/../../x", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		got, err := UnderRoot("/src/proj", c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("UnderRoot(%q) = %q, %v; want %q ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}
