package formats

import "strings"

// ProtoError is err, from protobuf-go, with a text that is the same from
// every build: protobuf-go writes a no-break space for some spaces of its
// messages, chosen by a hash of the binary, so that nobody matches them;
// a failure's message must not change with the binary. errors.Is and As
// still see err. Nil stays nil.
func ProtoError(err error) error {
	if err == nil {
		return nil
	}
	return stableError{err, strings.ReplaceAll(err.Error(), "\u00a0", " ")}
}

type stableError struct {
	err error
	msg string
}

func (e stableError) Error() string { return e.msg }
func (e stableError) Unwrap() error { return e.err }
