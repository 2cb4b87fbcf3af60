package table

// KernelValidation is a row of validation.receipts: one receipt of a
// kernel validation file (pkg/kernelvalidation, flameox_validate), in
// file order.
type KernelValidation struct {
	Line            int64         `col:"line,base=1" doc:"1-based line of the receipt in its file"`
	Case            string        `col:"case_id" doc:"the case the validation command checked"`
	Status          string        `col:"status" doc:"pass, fail, inconclusive or unsupported, as the command decided"`
	Reason          Null[string]  `col:"reason" doc:"why, as the command wrote it; null when none"`
	Producer        string        `col:"producer" doc:"the validation command"`
	ProducerVersion Null[string]  `col:"producer_version" doc:"its version; null when not given"`
	Expected        any           `col:"expected" doc:"the reference value: a scalar as written, or {digest, bytes} of a large value; null when not given"`
	Observed        any           `col:"observed" doc:"the kernel's value, as expected is"`
	MaxAbsError     Null[float64] `col:"max_abs_error" doc:"largest absolute error the command measured; null when not given"`
	MaxRelError     Null[float64] `col:"max_rel_error" doc:"largest relative error the command measured; null when not given"`
	Atol            Null[float64] `col:"atol" doc:"absolute tolerance of the comparison; null when not given"`
	Rtol            Null[float64] `col:"rtol" doc:"relative tolerance of the comparison; null when not given"`
	DType           Null[string]  `col:"dtype" doc:"element type (float16, bfloat16...); null when not given"`
	Shape           any           `col:"shape" doc:"dimensions, outermost first; null when not given"`
	Device          Null[string]  `col:"device" doc:"device the case ran on (cuda:0...); null when not given"`
	ConsolePath     Null[string]  `col:"console_path" doc:"the command's console file, kept whole as oracle input (a reference, never inlined); null when none"`
	ConsoleSHA256   Null[string]  `col:"console_sha256" doc:"SHA-256 of the console file when the receipt was written"`
	ConsoleBytes    Null[int64]   `col:"console_bytes,unit=bytes" doc:"size of the console file when the receipt was written"`
	TS              int64         `col:"ts,unit=ns" doc:"receipt time, nanoseconds since the Unix epoch"`
	PID             int64         `col:"pid" doc:"process that wrote the receipt"`
}

// KernelValidations is the validation.receipts schema.
var KernelValidations = Define[KernelValidation]("validation.receipts", "one row per receipt of a kernel validation file", FromArtifact)
