package bus

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DamagedDir is where a damaged stream's directory is copied, under the
// store (DATA/nats/.damaged/<UTC time>/<stream>/), before the server opens
// it and cuts its blocks short.
const DamagedDir = ".damaged"

// streamScan is one stream's blocks as read before the server opened them.
type streamScan struct {
	Name       string
	Dir        string              // the stream's directory in the store
	Blocks     []blockScan         // the damaged ones, with their records
	Tombstones map[uint64]struct{} // sequences deleted, from every block
	Encrypted  bool                // blocks not read: their key is the server's
	Bytes      int64               // of every block
	Elapsed    time.Duration       // reading them
}

func (s streamScan) damaged() bool { return len(s.Blocks) > 0 }

// scanStore reads every block of every stream under storeDir (serve's
// DATA/nats) without writing, and returns the streams with a damaged block.
func scanStore(storeDir string) ([]streamScan, error) {
	dirs, err := filepath.Glob(filepath.Join(storeDir, "jetstream", "*", "streams", "*"))
	if err != nil {
		return nil, fmt.Errorf("bus.scan: %w", err)
	}
	var out []streamScan
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		s, err := scanStream(dir)
		if err != nil {
			return out, err
		}
		if s.damaged() {
			out = append(out, s)
		}
	}
	return out, nil
}

// scanStream reads one stream's blocks, keeping the records of the damaged
// ones only: an undamaged block is what the server loads anyway.
func scanStream(dir string) (streamScan, error) {
	t0 := time.Now()
	s := streamScan{Name: filepath.Base(dir), Dir: dir, Tombstones: map[uint64]struct{}{}}
	if _, err := os.Stat(filepath.Join(dir, "meta.key")); err == nil {
		s.Encrypted = true
		return s, nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "msgs", "*.blk"))
	type numbered struct {
		index uint32
		path  string
	}
	var blocks []numbered
	for _, f := range files {
		n, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(f), ".blk"), 10, 32)
		if err == nil {
			blocks = append(blocks, numbered{uint32(n), f})
		}
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].index < blocks[j].index })
	for _, b := range blocks {
		buf, err := os.ReadFile(b.path)
		if err != nil {
			return s, fmt.Errorf("bus.scan: %w", err)
		}
		s.Bytes += int64(len(buf))
		scan := parseBlock(s.Name, b.index, buf)
		for _, r := range scan.Records {
			if r.Tombstone {
				s.Tombstones[r.Seq] = struct{}{}
			}
		}
		if scan.damaged() {
			s.Blocks = append(s.Blocks, scan)
		}
	}
	s.Elapsed = time.Since(t0)
	return s, nil
}

// copyAside copies each damaged stream's directory under
// storeDir/.damaged/<now>/, and returns where (the first error too: a
// stream that could not be copied is salvaged from what was read all the
// same).
func copyAside(storeDir string, streams []streamScan, now time.Time) (string, error) {
	root := filepath.Join(storeDir, DamagedDir, now.UTC().Format("20060102T150405Z"))
	for n := 2; ; n++ { // two starts within a second keep both copies
		if _, err := os.Stat(root); os.IsNotExist(err) {
			break
		}
		root = filepath.Join(storeDir, DamagedDir, fmt.Sprintf("%s-%d", now.UTC().Format("20060102T150405Z"), n))
	}
	var first error
	for _, s := range streams {
		if err := os.CopyFS(filepath.Join(root, s.Name), os.DirFS(s.Dir)); err != nil && first == nil {
			first = fmt.Errorf("bus: copying %s aside: %w", s.Name, err)
		}
	}
	return root, first
}
