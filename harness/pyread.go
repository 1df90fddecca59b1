//go:build !redteamweak

package harness

// readPy is an embedded file of the Python evaluator, as embedded. A test
// build with -tags redteamweak replaces it (pyread_redteamweak.go).
func readPy(name string) ([]byte, error) { return pyFS.ReadFile(name) }
