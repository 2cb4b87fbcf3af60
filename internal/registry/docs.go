package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// SupportMarkdown renders docs/support.md from the registry. `make check`
// fails when the committed file differs.
func SupportMarkdown() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from internal/registry by `go run ./internal/gendocs`. Do not edit. -->\n")
	b.WriteString("# Support table\n\n")
	b.WriteString("Artifact analysis and typed capture are separate contracts. An em dash means callers\n")
	b.WriteString("provide an explicit artifact path; it does not mean the format is unsupported.\n\n")
	b.WriteString("| Evidence family | Explicit artifact analysis | Typed capture provider |\n|---|---|---|\n")
	var families []string
	for _, f := range formatList {
		if !slices.Contains(families, f.Family) {
			families = append(families, f.Family)
		}
	}
	for _, fam := range families {
		var fs, ps []string
		for _, f := range formatList {
			if f.Family == fam {
				fs = append(fs, f.Title+" (`"+f.Name+"`)")
			}
		}
		for _, p := range providerList {
			if p.Family == fam {
				ps = append(ps, "`"+p.Name+"`")
			}
		}
		prov := "—"
		if len(ps) > 0 {
			prov = strings.Join(ps, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", fam, strings.Join(fs, ", "), prov)
	}

	b.WriteString("\n## Operations\n")
	for _, o := range operationList {
		fmt.Fprintf(&b, "\n### `%s` — %s\n\n", o.Name, o.Title)
		fmt.Fprintf(&b, "%s\n\n", o.Guidance)
		fmt.Fprintf(&b, "- projection: `%s` over %s\n", o.Projection.Name, codeList(tableNames(o.Projection.Tables)))
		fmt.Fprintf(&b, "- source modes: %s\n", strings.Join(o.SourceModes(), ", "))
		fmt.Fprintf(&b, "- formats: %s\n", codeList(o.Formats()))
		var provs []string
		for _, p := range providerList {
			if slices.Contains(p.Operations, o.Name) {
				provs = append(provs, p.Name)
			}
		}
		if len(provs) > 0 {
			fmt.Fprintf(&b, "- capture providers: %s\n", codeList(provs))
		}
		if o.Overhead != "" {
			fmt.Fprintf(&b, "- overhead: %s\n", o.Overhead)
		}
		for _, l := range o.Limitations {
			fmt.Fprintf(&b, "- limitation: %s\n", l)
		}
		b.WriteString("\n")
		writeParams(&b, "Argument", o.Params(), true)
	}

	b.WriteString("\n## Formats\n\n| Format | Title | Suffixes | Sniffed | Tables | Parser limits |\n|---|---|---|---|---|---|\n")
	for _, f := range formatList {
		var lims []string
		for _, l := range f.Limits {
			lims = append(lims, fmt.Sprintf("`%s`=%d", l.Name, l.Default))
		}
		sniff := "no"
		if f.Sniff != nil {
			sniff = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", f.Name, f.Title, codeList(f.Suffixes), sniff, codeList(f.TableNames()), strings.Join(lims, ", "))
	}

	b.WriteString("\n## Decoder options\n\n" +
		"Given as `--option NAME=VALUE` to flameox-decode and flameox-rank, or in `options` of an MCP call. " +
		"Each format takes only the options it declares, typed as declared: text on the command line " +
		"becomes the option's type, so `--option delimiter=1` is a string and `--option max_rows=10` an integer.\n")
	for _, f := range formatList {
		if len(f.Options) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### `%s` — %s\n\n", f.Name, f.Title)
		writeParams(&b, "Option", f.Options, false)
	}

	b.WriteString("\n## Capture providers\n")
	for _, p := range providerList {
		fmt.Fprintf(&b, "\n### `%s` — %s\n\n%s\n\n", p.Name, p.Title, p.Selection)
		bind := "`" + p.Binding.Executable + "` from PATH"
		switch {
		case p.Binding.Managed:
			bind = fmt.Sprintf("managed `%s` %s, prepared by `flameox-capture setup --provider %s`", p.Binding.Executable, p.Binding.Pinned, p.Name)
		case p.Binding.InWorkload:
			bind = fmt.Sprintf("`%s` imported in the declared workload interpreter", p.Binding.Executable)
		}
		fmt.Fprintf(&b, "- collector: %s\n", bind)
		for _, r := range p.Artifacts {
			req := ""
			if r.Required {
				req = " (required)"
			}
			fmt.Fprintf(&b, "- artifact role `%s`: format `%s`, files `%s`%s\n", r.Role, r.Format, r.Pattern, req)
		}
		if len(p.Operations) > 0 {
			fmt.Fprintf(&b, "- feeds: %s\n", codeList(p.Operations))
		}
		b.WriteString("\n")
		writeParams(&b, "Argument", p.Params, true)
	}
	return b.String()
}

// writeParams writes a table of declared parameters: their type, default
// and range. flag gives an argument's command-line flag beside its name.
func writeParams(b *strings.Builder, what string, ps []param.Param, flag bool) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(b, "| %s | Type | Default | Range | Meaning |\n|---|---|---|---|---|\n", what)
	for _, p := range ps {
		def, rng := "—", "—"
		if d := p.DefaultText(); d != "" {
			def = "`" + d + "`"
		}
		if r := p.Range(); r != "" {
			rng = r
		}
		name := "`" + p.Name + "`"
		if flag {
			name += " (`--" + p.Flag() + "`)"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", name, p.TypeText(" \\| "), def, rng, p.Doc)
	}
}

func codeList(xs []string) string {
	if len(xs) == 0 {
		return "—"
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return strings.Join(out, ", ")
}

func tableNames(ts []*table.Schema) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}
