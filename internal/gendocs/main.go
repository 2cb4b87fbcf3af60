// Command gendocs writes docs/support.md from the registry and
// docs/tables.md, the table contract, from the table declarations.
package main

import (
	"fmt"
	"os"

	"github.com/flameox/flameox/internal/registry"
)

func main() {
	if err := registry.Check(os.DirFS(".")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile("docs/support.md", []byte(registry.SupportMarkdown()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile("docs/tables.md", []byte(tablesMarkdown()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
