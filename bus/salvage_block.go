package bus

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"

	"github.com/minio/highwayhash"
)

// A message block (msgs/N.blk) is a run of records, each
//
//	len(4) seq(8) ts(8) subjlen(2) subj [hdrlen(4) hdr] msg hash(8)
//
// little-endian, with the length's top bit set when a header is present, and
// the hash a 64-bit HighwayHash of seq..subjlen, subj, hdr and msg keyed by
// sha256("<stream>-<N>"). The server stops reading a block at its first bad
// record and cuts the file there; this reader skips the bad bytes instead and
// carries on at the next offset where a whole record checks out, so the
// records after a damaged stretch can be put back.

const (
	recHeaderLen  = 22
	recHashLen    = 8
	recHasHeaders = 1 << 31 // on the length
	recErased     = 1 << 63 // on the sequence: the message was erased in place
	recTombstone  = 1 << 62 // on the sequence: a delete marker for a message stored earlier
	recMaxLen     = 32 << 20
)

// blockRecord is one record of a block that read back whole.
type blockRecord struct {
	Offset    int
	Seq       uint64
	TS        int64 // Unix nanoseconds
	Subject   string
	Header    []byte // the raw NATS header block; nil without one
	Data      []byte
	Erased    bool // nothing to put back: an erased message's bytes are noise
	Tombstone bool // Seq was deleted
}

// badRun is a stretch of a block that held no readable record.
type badRun struct {
	Offset, Len int
	Records     int // messages whose sequences fall in the stretch (at least 1)
}

// blockScan is what one block held.
type blockScan struct {
	Index    uint32
	Size     int
	Records  []blockRecord
	Bad      []badRun
	FirstBad int    // offset of the first bad record, -1 when none: the server drops the block from there
	Unread   string // why the block could not be read at all; "" when it was
}

func (s blockScan) damaged() bool { return len(s.Bad) > 0 || s.Unread != "" }

func (s blockScan) badBytes() int {
	n := 0
	for _, r := range s.Bad {
		n += r.Len
	}
	return n
}

// parseBlock reads block index of stream from buf, which it keeps
// references into.
func parseBlock(stream string, index uint32, buf []byte) blockScan {
	scan := blockScan{Index: index, Size: len(buf), FirstBad: -1}
	// A compressed block is one S2 stream: a damaged one does not decode
	// past the damage, and guessing its records would invent data.
	if len(buf) >= 5 && bytes.HasPrefix(buf, []byte("cmp")) && buf[3] == 1 {
		scan.Unread = "compressed (S2): not read"
		scan.Bad = []badRun{{Offset: 0, Len: len(buf), Records: 1}}
		scan.FirstBad = 0
		return scan
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%s-%d", stream, index))
	hh, err := highwayhash.New64(key[:])
	if err != nil { // only for a key that is not 32 bytes
		scan.Unread = "no hash: " + err.Error()
		return scan
	}
	for i := 0; i < len(buf); {
		if rec, n, ok := readRecord(buf, i, hh); ok {
			scan.Records = append(scan.Records, rec)
			i += n
			continue
		}
		if scan.FirstBad < 0 {
			scan.FirstBad = i
		}
		j := i + 1
		for ; j < len(buf); j++ {
			if _, _, ok := readRecord(buf, j, hh); ok {
				break
			}
		}
		scan.Bad = append(scan.Bad, badRun{Offset: i, Len: j - i})
		i = j
	}
	countLost(&scan)
	return scan
}

// readRecord reads the record at buf[i:], checks its hash, and returns it
// with its length.
func readRecord(buf []byte, i int, hh hash.Hash64) (blockRecord, int, bool) {
	if len(buf)-i < recHeaderLen+recHashLen {
		return blockRecord{}, 0, false
	}
	le := binary.LittleEndian
	hdr := buf[i : i+recHeaderLen]
	rl := le.Uint32(hdr[0:])
	withHeader := rl&recHasHeaders != 0
	rl &^= recHasHeaders
	slen := int(le.Uint16(hdr[20:]))
	if rl > recMaxLen || int(rl) < recHeaderLen+recHashLen || int(rl) > len(buf)-i {
		return blockRecord{}, 0, false
	}
	body := buf[i+recHeaderLen : i+int(rl)-recHashLen]
	sum := buf[i+int(rl)-recHashLen : i+int(rl)]
	pre := slen
	if withHeader {
		pre += 4
	}
	if pre > len(body) {
		return blockRecord{}, 0, false
	}
	hh.Reset()
	hh.Write(hdr[4:20])
	hh.Write(body[:slen])
	hh.Write(body[pre:])
	var got [recHashLen]byte
	if !bytes.Equal(hh.Sum(got[:0]), sum) {
		return blockRecord{}, 0, false
	}
	seq := le.Uint64(hdr[4:])
	rec := blockRecord{
		Offset:    i,
		Seq:       seq &^ (recErased | recTombstone),
		TS:        int64(le.Uint64(hdr[12:])),
		Subject:   string(body[:slen]),
		Data:      body[pre:],
		Erased:    seq&recErased != 0 || seq == 0,
		Tombstone: seq&recTombstone != 0,
	}
	if withHeader {
		hl := int(le.Uint32(body[slen:]))
		if hl > len(body)-pre {
			return blockRecord{}, 0, false
		}
		rec.Header, rec.Data = body[pre:pre+hl], body[pre+hl:]
	}
	return rec, int(rl), true
}

// countLost estimates the messages each bad stretch held from the
// sequences on either side of it: a block's messages are numbered in order.
func countLost(scan *blockScan) {
	for k := range scan.Bad {
		run := &scan.Bad[k]
		var before, after uint64
		for _, r := range scan.Records {
			if r.Tombstone {
				continue
			}
			if r.Offset < run.Offset {
				before = r.Seq
			} else if after == 0 {
				after = r.Seq
			}
		}
		run.Records = 1
		if before > 0 && after > before+1 {
			run.Records = int(after - before - 1)
		}
	}
}
