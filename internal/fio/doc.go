// Package fio runs the real fio random-read baseline and parses its JSON
// output. The baseline is the ceiling every tierbench layer is reported as a
// share of: random read, O_DIRECT, io_uring or libaio, several files shared
// by all jobs, one group-reported result.
//
// Parse is defensive because fio prints error and info lines into the same
// stream as its JSON document: it starts at the first '{' and, when the
// document does not parse, returns an error that quotes the raw text.
package fio
