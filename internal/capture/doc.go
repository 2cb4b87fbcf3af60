// Package capture is the capture runtime: it runs a collector around a
// workload under explicit budgets (time, memory, output growth, free
// space), owns the whole process tree (every workload runs under a
// subreaper shepherd, this binary re-executed, so detached descendants
// stay in the tree and die with the capture even when it is SIGKILLed;
// see shepherd.go), retains console output boundedly or in full, stages
// the collector's declared outputs, and, on request, preserves the native
// bytes in an evidence bundle even when the capture fails. It emits one
// capture block (execution provenance, with a limit receipt when a budget
// ended the workload) and one artifact block per staged output.
//
// Providers (package capture/providers/<name>) declare their arguments,
// collector binding and artifact roles; the runtime is the same for all.
// See docs/capture.md.
//
// It imports evidence, param, unit, proc, bundle and store (the index).
package capture
