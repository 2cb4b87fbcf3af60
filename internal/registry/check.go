package registry

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Check verifies that the lists agree with each other: unique names, every
// referenced format, operation and table exists, and every format's tables
// are consumed by an operation (a decoder not reachable through a declared
// operation would be latent, unregistered support). It also reads the
// module's Go sources at src (the module root) and fails on any format or
// operation name written as a literal outside the registry (see literals):
// a copy of a name the registry owns goes stale without a compile error.
func Check(src fs.FS) error {
	var errs []string
	seen := map[string]bool{}
	unique := func(kind, name string) {
		if seen[kind+":"+name] {
			errs = append(errs, "duplicate "+kind+" "+name)
		}
		seen[kind+":"+name] = true
	}
	for _, f := range formatList {
		unique("format", f.Name)
		if f.Decoder == nil {
			errs = append(errs, "format "+f.Name+" has no decoder")
		}
		if len(f.Suffixes) == 0 && f.Sniff == nil {
			errs = append(errs, "format "+f.Name+" can be neither detected nor sniffed")
		}
		for _, s := range f.Suffixes {
			if s != strings.ToLower(s) || !strings.HasPrefix(s, ".") {
				errs = append(errs, fmt.Sprintf("format %s: suffix %q must be lower case and start with a dot", f.Name, s))
			}
		}
		consumed := false
		for _, t := range f.Tables {
			if len(OperationsForTables([]string{t.Name})) > 0 {
				consumed = true
			}
		}
		if !consumed {
			errs = append(errs, "format "+f.Name+" emits no table any operation consumes")
		}
	}
	for _, o := range operationList {
		unique("operation", o.Name)
		if o.Projection == nil {
			errs = append(errs, "operation "+o.Name+" has no projection")
		}
	}
	for _, p := range providerList {
		unique("provider", p.Name)
		if p.Resolve == nil || p.Plan == nil {
			errs = append(errs, "provider "+p.Name+" lacks Resolve or Plan")
		}
		for _, r := range p.Artifacts {
			if _, ok := Format(r.Format); !ok {
				errs = append(errs, fmt.Sprintf("provider %s: artifact role %s declares unknown format %q", p.Name, r.Role, r.Format))
			}
		}
		for _, on := range p.Operations {
			o, ok := OperationByName(on)
			if !ok {
				errs = append(errs, fmt.Sprintf("provider %s feeds unknown operation %s", p.Name, on))
				continue
			}
			fits := false
			for _, f := range ProviderFormats(p) {
				if slices.Contains(o.Formats(), f) {
					fits = true
				}
			}
			if !fits {
				errs = append(errs, fmt.Sprintf("provider %s feeds %s but declares none of its formats", p.Name, on))
			}
		}
	}
	errs = append(errs, checkSources(src)...)
	if len(errs) > 0 {
		return fmt.Errorf("registry:\n\t%s", strings.Join(errs, "\n\t"))
	}
	return nil
}
