// Package main is a deliberately insecure program: each marked line is a
// finding gosec is expected to report, so the SARIF fixture has known results.
package main

import (
	"crypto/md5" // G501: blocklisted import
	"fmt"
	"os"
	"os/exec"
)

// G101: hard-coded credential.
const password = "hunter2-super-secret-password"

func main() {
	h := md5.Sum([]byte(password)) // G401: weak hash
	fmt.Println(h)
	cmd := exec.Command("sh", "-c", os.Args[1]) // G204: subprocess from a variable
	cmd.Run()                                   // G104: unchecked error
	os.WriteFile("/tmp/out.txt", h[:], 0o777)   // G306: permissive file mode; G104
}
