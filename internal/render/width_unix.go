//go:build unix

package render

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ttyWidth is the column count of the terminal w writes to, or 0.
func ttyWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
