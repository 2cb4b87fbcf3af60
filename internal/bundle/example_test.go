package bundle_test

import (
	"fmt"
	"os"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/wire"
)

// Replaying a bundle, as flameox-decode --bundle DIR does: verify it, pass
// its provenance and failures on, and decode its native copies again.
func ExampleOpen() {
	r, err := bundle.Open("store/bundles/17d6043396743eba79a78ca66f8f835a0a492431db16fb68331d2faacc6b949b")
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // an *evidence.Failure, e.g. INTEGRITY_FAILURE at the tampered file
		return
	}
	w := wire.NewWriter(os.Stdout)
	defer w.Flush()
	for _, c := range r.Captures() {
		w.Write(c)
	}
	for _, f := range r.Failures() {
		w.Write(f)
	}
	for _, a := range r.Artifacts() {
		w.Write(a) // a.Path is the bundle's native/<hex>; hand a to formats.Run
	}
}
