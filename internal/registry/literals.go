package registry

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/flameox/flameox/internal/formats"
)

// listFile is the one file where operation names are written, and where
// the formats and providers are listed.
const listFile = "internal/registry/list.go"

// literal is a format or operation name written as a string literal where
// it names a format or an operation: a second, unchecked copy of a name
// the registry owns.
type literal struct {
	File string // slash path relative to the module root
	Line int
	Kind string // "format" or "operation"
	Name string
	Why  string // the rule that caught it
}

func (l literal) String() string {
	return fmt.Sprintf("%s:%d: %s name %q as a literal (%s)", l.File, l.Line, l.Kind, l.Name, l.Why)
}

// checkSources reports the registry's names written as literals in the
// module's non-test Go sources under src.
func checkSources(src fs.FS) []string {
	found, err := literals(src, formats.Names(formatList), operationNames())
	if err != nil {
		return []string{err.Error()}
	}
	errs := make([]string, len(found))
	for i, l := range found {
		errs[i] = l.String()
	}
	return errs
}

func operationNames() []string {
	out := make([]string, len(operationList))
	for i, o := range operationList {
		out[i] = o.Name
	}
	return out
}

// literals parses the non-test Go sources of the module rooted at src and
// returns every string literal that names one of the formats or
// operations outside listFile and the formats' own spec declarations.
//
// Operation names are distinctive, so any literal equal to one is
// reported. Format names include ordinary words (json, text, csv), so a
// literal equal to one is reported only where it is used as a format: as
// the value of a field or key named for formats (Format:, Formats:,
// "format":), compared with or switched on an expression that mentions a
// format or spec, passed to a call that mentions one (registry.Format,
// slices.Contains(op.Formats(), …)), assigned to or declared as such a
// name (const FormatJSON = …), used as an index of one, or returned by a
// function named for formats. A JSON key, a message or an unrelated flag
// value ("--format", "jsonl") is not a format.
func literals(src fs.FS, formatNames, operations []string) ([]literal, error) {
	module, err := modulePath(src)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	var names []string
	err = fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && skipDir(src, p, d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, b, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("registry: parse %s: %w", p, err)
		}
		files = append(files, f)
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := &checker{fset: fset, module: module, formats: formatNames, operations: operations,
		declared: map[token.Pos]bool{}}
	c.findDeclarations(files, names)
	var out []literal
	for i, f := range files {
		if names[i] == listFile {
			continue
		}
		out = append(out, c.file(f, names[i])...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// skipDir leaves out what is not the module's own code: fixtures,
// hidden and vendored trees, and nested modules.
func skipDir(src fs.FS, p, name string) bool {
	if name == "testdata" || name == "node_modules" || name == "vendor" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := fs.Stat(src, path.Join(p, "go.mod"))
	return err == nil
}

func modulePath(src fs.FS) (string, error) {
	f, err := src.Open("go.mod")
	if err != nil {
		return "", fmt.Errorf("registry: the source tree has no go.mod: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("registry: go.mod names no module")
}

type checker struct {
	fset       *token.FileSet
	module     string
	formats    []string
	operations []string
	// declared holds the positions of the literals that declare a format:
	// a spec's Name, or the constant a spec's Name refers to.
	declared map[token.Pos]bool
}

// findDeclarations marks each format's own declaration: the Name of a
// formats.Spec literal, written as a literal or as a constant of the same
// package or of an imported one.
func (c *checker) findDeclarations(files []*ast.File, names []string) {
	type ref struct{ dir, ident string }
	var refs []ref
	for i, f := range files {
		dir := path.Dir(names[i])
		imports := importDirs(f, c.module)
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok || !isSpecType(cl.Type, f.Name.Name) {
				return true
			}
			for _, e := range cl.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok || identName(kv.Key) != "Name" {
					continue
				}
				switch v := kv.Value.(type) {
				case *ast.BasicLit:
					c.declared[v.Pos()] = true
				case *ast.Ident:
					refs = append(refs, ref{dir, v.Name})
				case *ast.SelectorExpr:
					if x, ok := v.X.(*ast.Ident); ok && imports[x.Name] != "" {
						refs = append(refs, ref{imports[x.Name], v.Sel.Name})
					}
				}
			}
			return true
		})
	}
	for i, f := range files {
		dir := path.Dir(names[i])
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for j, n := range vs.Names {
					if j < len(vs.Values) && slices.Contains(refs, ref{dir, n.Name}) {
						if lit, ok := vs.Values[j].(*ast.BasicLit); ok {
							c.declared[lit.Pos()] = true
						}
					}
				}
			}
		}
	}
}

// isSpecType reports whether a composite literal's type is formats.Spec
// (or Spec inside package formats).
func isSpecType(t ast.Expr, pkg string) bool {
	switch x := t.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "formats" && x.Sel.Name == "Spec"
	case *ast.Ident:
		return pkg == "formats" && x.Name == "Spec"
	}
	return false
}

// importDirs maps a file's import names to the module-relative directory
// of each import inside the module.
func importDirs(f *ast.File, module string) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = rel
	}
	return out
}

func (c *checker) file(f *ast.File, name string) []literal {
	var out []literal
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && !c.declared[lit.Pos()] {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				line := c.fset.Position(lit.Pos()).Line
				switch {
				case slices.Contains(c.operations, s):
					out = append(out, literal{File: name, Line: line, Kind: "operation", Name: s, Why: "operation names live in " + listFile})
				case slices.Contains(c.formats, s):
					if why := formatUse(lit, stack); why != "" {
						out = append(out, literal{File: name, Line: line, Kind: "format", Name: s, Why: why})
					}
				}
			}
		}
		stack = append(stack, n)
		return true
	})
	return out
}

// formatUse says how the literal (whose ancestors are stack, innermost
// last) is used as a format name, or "" when it is not.
func formatUse(lit *ast.BasicLit, stack []ast.Node) string {
	var child ast.Node = lit
	for i := len(stack) - 1; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.CompositeLit:
			// An element of a list or map literal: judge the literal by
			// where the whole list or map goes.
			child = p
			continue
		case *ast.KeyValueExpr:
			if p.Key == child {
				// A map key: judge it by the map.
				child = p
				continue
			}
			// A field or key names what its value is.
			if key := keyName(p.Key); mentionsFormat(key) {
				return "value of " + key
			}
			return ""
		case *ast.UnaryExpr, *ast.ParenExpr:
			child = p
			continue
		case *ast.BinaryExpr:
			if p.Op != token.EQL && p.Op != token.NEQ {
				return ""
			}
			other := p.X
			if other == child {
				other = p.Y
			}
			if exprMentions(other) {
				return "compared with " + exprText(other)
			}
		case *ast.CaseClause:
			if i > 1 {
				if sw, ok := stack[i-2].(*ast.SwitchStmt); ok && sw.Tag != nil && exprMentions(sw.Tag) {
					return "case of a switch on " + exprText(sw.Tag)
				}
			}
		case *ast.CallExpr:
			if p.Fun == child {
				return ""
			}
			if exprMentions(p.Fun) {
				return "argument of " + exprText(p.Fun)
			}
			for _, a := range p.Args {
				if a != child && exprMentions(a) {
					return "argument beside " + exprText(a)
				}
			}
		case *ast.AssignStmt:
			for _, l := range p.Lhs {
				if exprMentions(l) {
					return "assigned to " + exprText(l)
				}
			}
		case *ast.ValueSpec:
			for _, n := range p.Names {
				if mentionsFormat(n.Name) {
					return "declared as " + n.Name
				}
			}
			if p.Type != nil && exprMentions(p.Type) {
				return "declared as " + exprText(p.Type)
			}
		case *ast.IndexExpr:
			if p.Index == child && exprMentions(p.X) {
				return "index of " + exprText(p.X)
			}
		case *ast.ReturnStmt:
			for j := i - 1; j >= 0; j-- {
				if fd, ok := stack[j].(*ast.FuncDecl); ok {
					if mentionsFormat(fd.Name.Name) {
						return "returned by " + fd.Name.Name
					}
					break
				}
				if _, ok := stack[j].(*ast.FuncLit); ok {
					break
				}
			}
		}
		return ""
	}
	return ""
}

// keyName is a composite-literal key as written: a field name or a
// string key's text.
func keyName(e ast.Expr) string {
	switch k := e.(type) {
	case *ast.Ident:
		return k.Name
	case *ast.BasicLit:
		if s, err := strconv.Unquote(k.Value); err == nil {
			return s
		}
	}
	return ""
}

func identName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// exprMentions reports whether an expression names a format or a spec in
// one of its identifiers (string literals inside it do not count).
func exprMentions(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && mentionsFormat(id.Name) {
			found = true
		}
		return !found
	})
	return found
}

// formatWords are the identifier words that name formats.
var formatWords = []string{"format", "formats", "fmts", "spec", "specs"}

// mentionsFormat reports whether an identifier or key has a word that
// names formats: Format, ArtifactFormat, FormatJSON, format_name, specs.
func mentionsFormat(name string) bool {
	for _, w := range words(name) {
		if slices.Contains(formatWords, w) {
			return true
		}
	}
	return false
}

// words splits an identifier at underscores, hyphens and lower-to-upper
// case changes, lower-casing each word.
func words(name string) []string {
	var out []string
	var cur []rune
	rs := []rune(name)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) ||
			(i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1]))):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// exprText is a short rendering of an expression for a finding.
func exprText(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprText(x.X) + "." + x.Sel.Name
	case *ast.CallExpr:
		return exprText(x.Fun) + "(…)"
	case *ast.IndexExpr:
		return exprText(x.X) + "[…]"
	case *ast.StarExpr:
		return "*" + exprText(x.X)
	case *ast.ArrayType:
		return "[]" + exprText(x.Elt)
	case *ast.MapType:
		return "map[" + exprText(x.Key) + "]" + exprText(x.Value)
	}
	return fmt.Sprintf("%T", e)
}
