// Package util holds a second finding in another directory, so locations
// span more than one file.
package util

import (
	"net/http"
	"os"
	"path/filepath"
)

// Serve reads a file named by the request (G304) and serves without
// timeouts (G114).
func Serve(root string) {
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := os.ReadFile(filepath.Join(root, r.URL.Path))
		w.Write(b)
	})
	http.ListenAndServe(":8080", nil)
}
