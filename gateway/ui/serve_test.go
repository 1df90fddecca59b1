package ui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// repoRoot is two folders up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// repoFile is the text of the repository's file p (a path from its root).
func repoFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// required: in CI (KERNELGATE_REQUIRE_PYTHON=1) a missing prerequisite
// fails the test; elsewhere it skips it.
func required(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
		t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 (CI) but "+format, args...)
	}
	t.Skipf(format, args...)
}

// buildBinary is $KERNELGATE_BIN (make test-go passes the bin/kernelgate
// that make build just linked), else cmd/kernelgate built as make build does.
func buildBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("KERNELGATE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "kernelgate")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/kernelgate")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// gateway is a live `kernelgate serve` on a free loopback port, with one
// API key (scopes reward, search, admin), so that every request, the
// browser's included, needs it.
type gateway struct {
	URL  string
	Key  string
	bin  string // the binary and its data directory, for keys revoke
	data string
	cmd  *exec.Cmd
	log  *bytes.Buffer
	args []string // serve's, to start it again on the same data
	env  []string
	// exited is closed when the running serve has exited.
	exited chan struct{}
}

// start runs serve and waits for /readyz (the zygote imports torch first).
func (g *gateway) start(t *testing.T) {
	t.Helper()
	g.cmd = exec.Command(g.bin, g.args...)
	g.cmd.Env = g.env
	g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { g.cmd.Wait(); close(exited) }()
	g.exited = exited
	kgtest.CheckFor(t, 180*time.Second, 250*time.Millisecond, func() error {
		select {
		case <-exited:
			return fmt.Errorf("serve exited: %s", tail(g.log.String(), 2000))
		default:
		}
		resp, err := http.Get(g.URL + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", resp.StatusCode)
		}
		return nil
	})
}

// stop sends serve SIGINT and waits for it to exit (killing it after 60 s).
func (g *gateway) stop(t *testing.T) {
	t.Helper()
	select {
	case <-g.exited:
		return
	default:
	}
	g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.exited:
	case <-time.After(60 * time.Second):
		g.cmd.Process.Kill()
		<-g.exited
		t.Errorf("serve did not stop within 60 s of SIGINT")
	}
}

// restart stops serve and starts it again on the same data directory.
func (g *gateway) restart(t *testing.T) {
	t.Helper()
	g.stop(t)
	g.start(t)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startServe runs the binary in CPU mode with the scripted LLM at llmURL
// and waits for /readyz (the zygote imports torch first).
func startServe(t *testing.T, bin, llmURL string) *gateway {
	t.Helper()
	py, err := harness.ResolvePython(os.Getenv(harness.EnvPython))
	if err != nil {
		required(t, "no python with torch: %v", err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	data := filepath.Join(t.TempDir(), "data")
	out, err := exec.Command(bin, "keys", "create", "--scopes", "reward,search,admin", "--name", "ui-test", "--data", data).Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	g := &gateway{URL: "http://" + addr, Key: strings.TrimSpace(string(out)), bin: bin, data: data, log: &bytes.Buffer{},
		args: []string{"serve", "--addr", addr, "--data", data, "--device", "cpu", "--llm-url", llmURL, "--model", "scripted",
			"--tasks", filepath.Join(repoRoot(t), "datasets", "ci")},
		env: append(os.Environ(), harness.EnvPython+"="+py)}
	g.start(t)
	t.Cleanup(func() {
		g.stop(t)
		if t.Failed() {
			t.Logf("serve's log:\n%s", tail(g.log.String(), 8000))
		}
	})
	return g
}

// post sends v as JSON and decodes the answer into out.
func (g *gateway) post(t *testing.T, path string, v, out any) int {
	t.Helper()
	body, _ := json.Marshal(v)
	req, err := http.NewRequest(http.MethodPost, g.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: %d, undecodable: %v", path, resp.StatusCode, err)
	}
	return resp.StatusCode
}

// revoke revokes the key; the running server rereads its key file.
func (g *gateway) revoke(t *testing.T) {
	t.Helper()
	if out, err := exec.Command(g.bin, "keys", "revoke", "ui-test", "--data", g.data).CombinedOutput(); err != nil {
		t.Fatalf("keys revoke: %v: %s", err, out)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}
