package bus

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/minio/highwayhash"
)

// appendRecord writes one record as the server lays it out, for blocks
// made by hand.
func appendRecord(buf []byte, stream string, index uint32, seq uint64, subj string, hdr, msg []byte) []byte {
	le := binary.LittleEndian
	rl := uint32(recHeaderLen + len(subj) + len(msg) + recHashLen)
	if len(hdr) > 0 {
		rl += 4 + uint32(len(hdr))
	}
	head := make([]byte, recHeaderLen)
	le.PutUint32(head[0:], rl)
	if len(hdr) > 0 {
		le.PutUint32(head[0:], rl|recHasHeaders)
	}
	le.PutUint64(head[4:], seq)
	le.PutUint64(head[12:], uint64(1e18)+seq)
	le.PutUint16(head[20:], uint16(len(subj)))
	key := sha256.Sum256(fmt.Appendf(nil, "%s-%d", stream, index))
	hh, _ := highwayhash.New64(key[:])
	hh.Write(head[4:20])
	hh.Write([]byte(subj))
	hh.Write(hdr)
	hh.Write(msg)
	buf = append(buf, head...)
	buf = append(buf, subj...)
	if len(hdr) > 0 {
		buf = le.AppendUint32(buf, uint32(len(hdr)))
		buf = append(buf, hdr...)
	}
	buf = append(buf, msg...)
	return hh.Sum(buf)
}

func handBlock(n int) ([]byte, []int) {
	var buf []byte
	var offs []int
	for i := 1; i <= n; i++ {
		offs = append(offs, len(buf))
		var hdr []byte
		if i%3 == 0 {
			hdr = []byte("NATS/1.0\r\nKV-Operation: DEL\r\n\r\n")
		}
		buf = appendRecord(buf, "KV_t", 1, uint64(i), fmt.Sprintf("$KV.t.k%d", i), hdr, bytes.Repeat([]byte{byte(i)}, 100))
	}
	return buf, offs
}

func TestParseBlock(t *testing.T) {
	clean, offs := handBlock(20)
	for _, c := range []struct {
		name     string
		buf      []byte
		stream   string
		seqs     int // records read
		lost     int // records counted lost
		firstBad int
		unread   bool
	}{
		{name: "sound", buf: clean, stream: "KV_t", seqs: 20, firstBad: -1},
		{name: "noise over records 6 and 7", buf: smashed(clean, offs[5]+10, offs[7]-offs[5]-20), stream: "KV_t", seqs: 18, lost: 2, firstBad: offs[5]},
		{name: "torn last record", buf: clean[:len(clean)-5], stream: "KV_t", seqs: 19, lost: 1, firstBad: offs[19]},
		{name: "another stream's key", buf: clean, stream: "KV_u", seqs: 0, lost: 1, firstBad: 0},
		{name: "compressed", buf: append([]byte("cmp\x01\x10"), clean...), stream: "KV_t", lost: 1, firstBad: 0, unread: true},
		{name: "empty", buf: nil, stream: "KV_t", firstBad: -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := parseBlock(c.stream, 1, c.buf)
			lost := 0
			for _, r := range s.Bad {
				lost += r.Records
			}
			if len(s.Records) != c.seqs || lost != c.lost || s.FirstBad != c.firstBad || (s.Unread != "") != c.unread {
				t.Fatalf("read %d records, %d lost, first bad %d, unread %q; want %d, %d, %d, %v",
					len(s.Records), lost, s.FirstBad, s.Unread, c.seqs, c.lost, c.firstBad, c.unread)
			}
			for _, r := range s.Records {
				want := bytes.Repeat([]byte{byte(r.Seq)}, 100)
				if !bytes.Equal(r.Data, want) || r.Subject != fmt.Sprintf("$KV.t.k%d", r.Seq) || isMarker(r.Header) != (r.Seq%3 == 0) {
					t.Errorf("record %d: subject %q header %q data %x", r.Seq, r.Subject, r.Header, r.Data[:4])
				}
			}
		})
	}
}

func smashed(buf []byte, at, n int) []byte {
	out := append([]byte(nil), buf...)
	for i := at; i < at+n; i++ {
		out[i] = byte(i*7 + 3)
	}
	return out
}

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		filter, subj string
		want         bool
	}{
		{"jobs.>", "jobs.gpu", true}, {"jobs.>", "jobs", false}, {"jobs.*", "jobs.gpu", true},
		{"jobs.*", "jobs.gpu.x", false}, {"jobs.gpu", "jobs.cpu", false}, {"events.evaluation", "events.evaluation", true},
	} {
		if got := subjectMatches(c.filter, c.subj); got != c.want {
			t.Errorf("subjectMatches(%q, %q) = %v", c.filter, c.subj, got)
		}
	}
}

// A block is untrusted bytes: the reader never panics, and what it reads
// lies within the block.
func FuzzParseBlock(f *testing.F) {
	clean, offs := handBlock(5)
	f.Add(clean)
	f.Add(smashed(clean, offs[2], 40))
	f.Add([]byte("cmp\x01"))
	f.Fuzz(func(t *testing.T, buf []byte) {
		s := parseBlock("KV_t", 1, buf)
		n := s.badBytes()
		for _, r := range s.Records {
			if r.Offset < 0 || r.Offset >= len(buf) {
				t.Fatalf("record at %d of %d", r.Offset, len(buf))
			}
		}
		if n > len(buf) {
			t.Fatalf("%d bad bytes of %d", n, len(buf))
		}
	})
}
