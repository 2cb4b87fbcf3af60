// Package evidence holds the block contract every flameox command speaks:
// the blocks (capture, artifact, table, row, summary, failure, bundle),
// their RFC 8785 canonical encoding with exact big integers and tagged
// non-finite doubles, typed failures with their exit statuses, and the
// limit receipt that both crossed workload budgets and crossed parser
// ceilings carry. Package wire reads and writes them as streams. See
// docs/evidence.md.
//
// It imports jsonscan only.
package evidence
