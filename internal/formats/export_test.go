package formats

// HashInline makes the read path hash on the reading goroutine (v true)
// or on its own (false, the default from concurrentFrom bytes), for the
// benchmark that measures the difference. It returns the restore.
func HashInline(v bool) (restore func()) {
	old := hashInline
	hashInline = v
	return func() { hashInline = old }
}
