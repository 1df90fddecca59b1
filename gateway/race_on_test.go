//go:build race

package gateway

// raceDetector: the test binary runs under -race, which slows everything
// several times over; timings measured under it say nothing.
const raceDetector = true
