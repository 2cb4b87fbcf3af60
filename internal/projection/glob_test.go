package projection

import "testing"

func TestNameGlob(t *testing.T) {
	cases := []struct {
		glob, s string
		want    bool
	}{
		{"*", "a/b.py::C::t[1]", true},
		{"tests/*::test_x", "tests/a/b.py::test_x", true},
		{"*[1]", "t::x[1]", true},
		{"*[1]", "t::x1", false},
		{"t?st", "test", true},
		{"t?st", "tst", false},
		{"a.b", "axb", false},
	}
	for _, c := range cases {
		re, err := NameGlob(c.glob)
		if err != nil {
			t.Fatal(err)
		}
		if got := re.MatchString(c.s); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v", c.glob, c.s, got, c.want)
		}
	}
}
