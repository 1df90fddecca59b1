package bus

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

const salvageKeys = 4000

// salvageValue is key's value in the test store: about 800 bytes, so that
// 4,000 of them fill a block of a few MB, as KV_batches does.
func salvageValue(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return bytes.Repeat([]byte(hex.EncodeToString(sum[:])), 12)
}

// filledStore makes a stopped store whose batches bucket holds
// salvageKeys keys, and returns its data directory.
func filledStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := Open(t.Context(), Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range salvageKeys {
		key := fmt.Sprintf("b%05d", i)
		if _, err := b.batches.Put(t.Context(), key, salvageValue(key)); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	return dir
}

// batchBlocks lists the batches bucket's block files.
func batchBlocks(t *testing.T, dir string) []string {
	t.Helper()
	blocks, _ := filepath.Glob(filepath.Join(dir, "nats", "jetstream", "$G", "streams", "KV_"+BatchBucket, "msgs", "*.blk"))
	if len(blocks) == 0 {
		t.Fatal("no KV_batches block")
	}
	return blocks
}

// smashBlock writes 4 KiB of noise into the middle of the largest block.
func smashBlock(t *testing.T, dir string) string {
	t.Helper()
	var path string
	var size int64
	for _, p := range batchBlocks(t, dir) {
		if fi, _ := os.Stat(p); fi.Size() > size {
			path, size = p, fi.Size()
		}
	}
	noise := make([]byte, 4096)
	rand.Read(noise)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(noise, size/2); err != nil {
		t.Fatal(err)
	}
	t.Logf("noise at %d of %s (%d bytes)", size/2, filepath.Base(path), size)
	return path
}

// treeSums hashes every file under dir.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		buf, err := os.ReadFile(p)
		sum := sha256.Sum256(buf)
		out[p] = hex.EncodeToString(sum[:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// intact counts the keys whose value reads back right.
func intact(t *testing.T, b *Bus) int {
	t.Helper()
	n := 0
	for i := range salvageKeys {
		key := fmt.Sprintf("b%05d", i)
		e, err := b.batches.Get(t.Context(), key)
		if err == nil && bytes.Equal(e.Value(), salvageValue(key)) {
			n++
		}
	}
	return n
}

// Open over a block with 4 KiB of noise in its middle copies the stream
// aside first, and puts back every record past the noise that the server
// cut off: all but the few records under the noise read back right.
func TestOpenSalvagesADamagedBlock(t *testing.T) {
	dir := filledStore(t)
	smashBlock(t, dir)

	t0 := time.Now()
	b, err := Open(t.Context(), Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	opened := time.Since(t0)

	copies, _ := filepath.Glob(filepath.Join(dir, "nats", DamagedDir, "*", "KV_"+BatchBucket, "msgs", "*.blk"))
	if len(copies) == 0 {
		t.Fatalf("no copy of KV_batches under %s", DamagedDir)
	}
	sal := b.Salvage()
	if len(sal) != 1 || sal[0].Stream != "KV_"+BatchBucket {
		t.Fatalf("Salvage() = %+v, want one report for KV_batches", sal)
	}
	s := sal[0]
	t.Logf("opened in %s; salvage %+v", opened, s)
	if s.Recovered == 0 || s.Lost == 0 || s.LostBytes < 4096 || s.Readable+s.Lost < salvageKeys || s.Error != "" {
		t.Errorf("salvage counts %+v: want records recovered, some lost, the noise's bytes lost", s)
	}
	if s.Copy == "" || filepath.Dir(filepath.Dir(copies[0])) != s.Copy {
		t.Errorf("report names copy %q, copy at %s", s.Copy, copies[0])
	}
	got := intact(t, b)
	// The noise covers about 5 records of ~830 bytes; the rest must be back.
	if want := salvageKeys - s.Lost; got < want || got < salvageKeys*99/100 {
		t.Fatalf("%d of %d keys read back right, want at least %d (%d lost under the noise)", got, salvageKeys, want, s.Lost)
	}
	t.Logf("%d of %d keys read back right", got, salvageKeys)
}

// A sound store is left alone: nothing copied, nothing salvaged.
func TestOpenLeavesASoundStoreAlone(t *testing.T) {
	dir := filledStore(t)
	b, err := Open(t.Context(), Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := os.Stat(filepath.Join(dir, "nats", DamagedDir)); !os.IsNotExist(err) {
		t.Errorf("%s exists for a sound store (%v)", DamagedDir, err)
	}
	if s := b.Salvage(); len(s) != 0 {
		t.Errorf("Salvage() = %+v, want none", s)
	}
	if got := intact(t, b); got != salvageKeys {
		t.Errorf("%d of %d keys read back right", got, salvageKeys)
	}
}

// Verify reads a damaged store without changing a byte of it, says which
// stream is damaged and counts what a start would put back.
func TestVerifyOfADamagedStoreChangesNothing(t *testing.T) {
	dir := filledStore(t)
	smashBlock(t, dir)
	before := treeSums(t, dir)

	reps, err := Verify(t.Context(), dir, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := sumsDiff(before, treeSums(t, dir)); diff != "" {
		t.Fatalf("Verify changed the store: %s", diff)
	}
	r := report(t, reps, "KV_"+BatchBucket)
	if len(r.Problems) == 0 || r.Salvage == nil {
		t.Fatalf("KV_batches report %+v: want problems and a salvage", r)
	}
	s := r.Salvage
	if !s.DryRun || s.Copy != "" || s.Recovered < salvageKeys*49/100 || s.Lost == 0 || s.Error != "" {
		t.Errorf("salvage %+v: want a dry run that would put back about half the keys", s)
	}
	if r.Messages < salvageKeys*99/100 {
		t.Errorf("the checked copy holds %d messages after the salvage, want about %d", r.Messages, salvageKeys)
	}
}

// Repair salvages in place as Open does; a second Verify finds nothing.
func TestRepairPutsBackWhatTheServerCut(t *testing.T) {
	dir := filledStore(t)
	smashBlock(t, dir)
	reps, err := Repair(t.Context(), dir, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	s := report(t, reps, "KV_"+BatchBucket).Salvage
	if s == nil || s.DryRun || s.Recovered == 0 || s.Error != "" {
		t.Fatalf("salvage %+v: want records put back", s)
	}
	if _, err := os.Stat(s.Copy); err != nil {
		t.Fatalf("the copy %q: %v", s.Copy, err)
	}
	reps, err = Verify(t.Context(), dir, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		if len(r.Problems) > 0 || r.Salvage != nil {
			t.Errorf("after Repair, %s: %v %+v", r.Name, r.Problems, r.Salvage)
		}
	}
	b, err := Open(t.Context(), Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := intact(t, b); got < salvageKeys*99/100 {
		t.Errorf("%d of %d keys read back right after Repair", got, salvageKeys)
	}
}

func report(t *testing.T, reps []StoreReport, name string) StoreReport {
	t.Helper()
	for _, r := range reps {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no report for %s in %+v", name, reps)
	return StoreReport{}
}

// sumsDiff says which files differ between two treeSums ("" when none).
func sumsDiff(a, b map[string]string) string {
	var out []string
	for p, s := range a {
		if b[p] != s {
			out = append(out, "changed or removed "+p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, "added "+p)
		}
	}
	return strings.Join(out, "; ")
}
