// Package event is what kernelgate logs: the events its parts publish on
// the bus's EVENTS stream (events.<kind>), one for each row of the log that
// package export writes. The parts that publish (dispatch, episode, the
// search runner) import this package and not export, which reads the
// stream and turns each event into a Parquet row; an event's JSON is what
// travels, so a field is only ever added.
//
// A leaf beside eval: it imports only the standard library and eval, and
// publishes through any Publisher (*bus.Bus is one).
package event
