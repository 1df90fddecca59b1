package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

const doctorBatches = 4000

func batchRecord(id string) []byte {
	sum := sha256.Sum256([]byte(id))
	return bytes.Repeat([]byte(hex.EncodeToString(sum[:])), 12)
}

// damagedData makes a stopped serve's data directory whose batches bucket
// holds doctorBatches records, with 4 KiB of noise in the middle of its
// block.
func damagedData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := bus.Open(t.Context(), bus.Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range doctorBatches {
		id := fmt.Sprintf("b%05d", i)
		if err := b.PutBatch(t.Context(), id, batchRecord(id)); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	blocks, _ := filepath.Glob(filepath.Join(dir, "nats", "jetstream", "$G", "streams", "KV_"+bus.BatchBucket, "msgs", "*.blk"))
	if len(blocks) != 1 {
		t.Fatalf("KV_batches blocks %v, want one", blocks)
	}
	fi, _ := os.Stat(blocks[0])
	f, err := os.OpenFile(blocks[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 4096)
	rand.Read(noise)
	_, err = f.WriteAt(noise, fi.Size()/2)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func fileSums(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			buf, _ := os.ReadFile(p)
			out = append(out, fmt.Sprintf("%s %x", p, sha256.Sum256(buf)))
		}
		return nil
	})
	return strings.Join(out, "\n")
}

func doctorRun(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"doctor", "--data"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// doctor --data on a damaged block changes no file, says DAMAGED and what a
// start would put back; --fix puts it back (JSON counts), and a check after
// says ok; every record outside the noise reads back.
func TestDoctorDataSalvage(t *testing.T) {
	dir := damagedData(t)
	before := fileSums(t, dir)
	code, out, errOut := doctorRun(dir)
	if code != exitFailed || !strings.Contains(out, "KV_batches:") || !strings.Contains(out, "DAMAGED") ||
		!strings.Contains(out, "would be put back") {
		t.Fatalf("doctor --data: exit %d\n%s%s", code, out, errOut)
	}
	if after := fileSums(t, dir); after != before {
		t.Fatalf("doctor without --fix changed the data directory:\nbefore\n%s\nafter\n%s", before, after)
	}
	t.Log(out)

	code, out, errOut = doctorRun(dir, "--fix", "--json")
	var rep dataReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitOK {
		t.Fatalf("doctor --fix --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	var s *bus.Salvage
	for _, st := range rep.Stores {
		if st.Name == "KV_"+bus.BatchBucket {
			s = st.Salvage
		}
	}
	if s == nil || s.DryRun || s.Recovered == 0 || s.Lost == 0 || s.Readable+s.Lost < doctorBatches || s.Copy == "" {
		t.Fatalf("salvage %+v: want records put back and a copy", s)
	}
	if _, err := os.Stat(s.Copy); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := doctorRun(dir); code != exitOK {
		t.Fatalf("doctor after --fix: exit %d\n%s", code, out)
	}

	b, err := bus.Open(t.Context(), bus.Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	good := 0
	for i := range doctorBatches {
		id := fmt.Sprintf("b%05d", i)
		if v, ok, err := b.Batch(t.Context(), id); err == nil && ok && bytes.Equal(v, batchRecord(id)) {
			good++
		}
	}
	if good < doctorBatches-s.Lost || good < doctorBatches*99/100 {
		t.Fatalf("%d of %d batches read back right (%d lost under the noise)", good, doctorBatches, s.Lost)
	}
	t.Logf("%d of %d batches read back right; salvage %+v", good, doctorBatches, *s)
}
