package capture

import (
	"fmt"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

// Budget limits one capture request. Every field is optional and unset by
// default: a workload without a budget runs until it exits or is
// cancelled. Crossing a set limit ends the workload's whole process tree
// and records an evidence.LimitReceipt in the capture block.
type Budget struct {
	// TimeoutSeconds bounds wall time from the workload's start through its
	// post commands.
	TimeoutSeconds float64
	// MaxMemoryBytes bounds the summed resident set size of every process
	// in the workload's tree, polled from /proc.
	MaxMemoryBytes int64
	// MaxOutputBytes bounds the writable growth of the plan's OutputDir
	// over its baseline (taken after support files are written).
	MaxOutputBytes int64
	// MinFreeBytes ends the workload when free space on the OutputDir's
	// file system drops below it.
	MinFreeBytes int64
}

// Budget limit names, as they appear in --workload-budget, MCP schemas and
// limit receipts.
const (
	LimitTimeout   = "timeout_seconds"
	LimitMemory    = "max_memory_bytes"
	LimitOutput    = "max_output_bytes"
	LimitFreeSpace = "min_free_bytes"
)

// BudgetParams is the argument model of a workload budget; the CLI's
// --workload-budget and the MCP capture schema derive from it.
var BudgetParams = []param.Param{
	{Name: LimitTimeout, Type: param.Number, Min: param.F(0.001),
		Doc: "end the workload (and its post commands) after this many seconds of wall time"},
	{Name: LimitMemory, Type: param.Int, Min: param.F(1),
		Doc: "end the workload when its process tree's summed resident set size exceeds this many bytes"},
	{Name: LimitOutput, Type: param.Int, Min: param.F(1),
		Doc: "end the workload when its output directory grows by more than this many bytes"},
	{Name: LimitFreeSpace, Type: param.Int, Min: param.F(1),
		Doc: "end the workload when free space on its output file system drops below this many bytes"},
}

// BudgetFrom validates a budget object (as MCP passes it) strictly.
func BudgetFrom(o evidence.Object) (Budget, error) {
	v, _, err := param.Validate(BudgetParams, o)
	if err != nil {
		return Budget{}, prefix(err, "workload budget")
	}
	var b Budget
	if x, ok := v[LimitTimeout]; ok {
		b.TimeoutSeconds = x.(float64)
	}
	if x, ok := v[LimitMemory]; ok {
		b.MaxMemoryBytes = x.(int64)
	}
	if x, ok := v[LimitOutput]; ok {
		b.MaxOutputBytes = x.(int64)
	}
	if x, ok := v[LimitFreeSpace]; ok {
		b.MinFreeBytes = x.(int64)
	}
	return b, nil
}

// ParseBudget reads the CLI form "timeout_seconds=N,max_memory_bytes=N".
func ParseBudget(s string) (Budget, error) {
	o, err := ParseKeyValues(s, "workload budget")
	if err != nil {
		return Budget{}, err
	}
	return BudgetFrom(o)
}

// ParseKeyValues reads "name=value,name=value" into an object of numbers,
// as --workload-budget and --limits take them. what names the flag in
// errors.
func ParseKeyValues(s, what string) (evidence.Object, error) {
	o := evidence.Object{}
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" || v == "" {
			return nil, evidence.Failf(evidence.CodeInvalidArgument, "%s: %q is not name=value", what, kv)
		}
		if _, dup := o[k]; dup {
			return nil, evidence.Failf(evidence.CodeInvalidArgument, "%s: %s given twice", what, k)
		}
		n, err := evidence.ParseValue([]byte(v), 1)
		if err != nil {
			return nil, evidence.Failf(evidence.CodeInvalidArgument, "%s: %s=%s: not a number", what, k, v)
		}
		o[k] = n
	}
	return o, nil
}

// Object is the budget as it is recorded in the capture block: every
// limit name, null when unset.
func (b Budget) Object() evidence.Object {
	o := evidence.Object{LimitTimeout: nil, LimitMemory: nil, LimitOutput: nil, LimitFreeSpace: nil}
	if b.TimeoutSeconds > 0 {
		o[LimitTimeout] = b.TimeoutSeconds
	}
	if b.MaxMemoryBytes > 0 {
		o[LimitMemory] = b.MaxMemoryBytes
	}
	if b.MaxOutputBytes > 0 {
		o[LimitOutput] = b.MaxOutputBytes
	}
	if b.MinFreeBytes > 0 {
		o[LimitFreeSpace] = b.MinFreeBytes
	}
	return o
}

// prefix adds context to a failure's message, keeping its code.
func prefix(err error, what string) error {
	if f, ok := err.(*evidence.Failure); ok {
		g := *f
		g.Message = what + ": " + f.Message
		return &g
	}
	return fmt.Errorf("%s: %w", what, err)
}
