//go:build !race

package gateway

// raceDetector: see race_on_test.go.
const raceDetector = false
