package dataset

import (
	"cmp"
	"slices"

	"github.com/kernelgate/kernelgate/export"
)

// skills writes skills.parquet: the skills table's rows that pass the
// filter (last_seen for time, status), with its columns. No table yet:
// an empty dataset.
func (b *build) skills() error {
	rows, files, err := readTable(b.log(), b.root, export.TableSkills, b.spec.Filter, b.spec.Filter.skill)
	if err != nil {
		return err
	}
	b.logSources(files)
	slices.SortStableFunc(rows, func(x, y export.Skill) int {
		return cmp.Or(cmp.Compare(x.SkillID, y.SkillID), cmp.Compare(x.Version, y.Version))
	})
	return output(b, "skills.parquet", rows)
}
