package skills

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func TestFileStoreVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := NewFileStore(filepath.Join(dir, "sub", "skills.json"))
	if rs, err := st.Load(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("empty store: %v %v", rs, err)
	}
	for _, r := range []Rule{{ID: "x", Version: 1, Hits: 3}, {ID: "x", Version: 2, Hits: 4}, {ID: "y", Version: 1}} {
		if err := st.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []int{1, 2} {
		if err := st.Put(ctx, Rule{ID: "x", Version: v}); !errors.Is(err, ErrVersion) {
			t.Errorf("Put x v%d again: %v, want ErrVersion", v, err)
		}
	}
	rs, err := NewFileStore(filepath.Join(dir, "sub", "skills.json")).Load(ctx)
	if err != nil || len(rs) != 3 || rs[1].Hits != 4 || rs[1].Version != 2 {
		t.Errorf("reloaded: %+v %v", rs, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "sub")); len(ents) != 1 {
		t.Errorf("temp files left: %v", ents)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileStore(filepath.Join(dir, "bad.json")).Load(ctx); err == nil {
		t.Error("corrupt file loaded")
	}
	m := New(NewFileStore(filepath.Join(dir, "bad.json")), newFakeLLM(), Config{}, kgtest.Logger(t))
	if err := m.Load(ctx); err == nil {
		t.Error("Memory.Load of a corrupt store: no error")
	}
}

// A memory restarted on the same file carries on where the first left off.
func TestMemoryRoundTrip(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", ruleFoo+"\nPATTERN: tl\\.foo")
	f.observe(t, nameErrors(4)...)
	f.observe(t, passed("p", "c", []string{f.rules(t)[0].ID}, nil))
	before := f.rules(t)

	again := New(NewFileStore(f.path), newFakeLLM(), Config{}, kgtest.Logger(t))
	after, err := again.Rules(context.Background())
	if err != nil || len(after) != 1 {
		t.Fatalf("reloaded rules %+v, %v", after, err)
	}
	// The on/off counts since the last version are memory only.
	want := before[0]
	want.OnOff = OnOff{}
	if !ruleEqual(after[0], want) {
		t.Errorf("reloaded:\n got %+v\nwant %+v", after[0], want)
	}
	if err := again.Observe(context.Background(), nameErrors(1)[0]); err != nil {
		t.Fatal(err)
	}
	all, _ := NewFileStore(f.path).Load(context.Background())
	if len(all) != 3 || all[2].Version != 3 || all[2].Hits != 5 || all[2].OnOff.Used != 0 {
		t.Errorf("versions after restart: %+v", all)
	}
}
