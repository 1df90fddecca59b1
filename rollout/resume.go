package rollout

import "fmt"

// replay rebuilds the tree and the counters from the steps of an earlier
// run of the same search, without calling the LLM or the evaluator: every
// node's verdict and reward are in its step. The count of LLM failures in
// a row starts again from zero: a restart is the endpoint's fresh chance.
func (s *search) replay(steps []Step) error {
	for i, st := range steps {
		if st.Parent < 0 || st.Parent >= len(s.tree.nodes) {
			return fmt.Errorf("rollout.resume: step %d: parent %d does not exist", i, st.Parent)
		}
		if st.Node > 0 {
			if st.Node != len(s.tree.nodes) {
				return fmt.Errorf("rollout.resume: step %d: node %d out of order (want %d)", i, st.Node, len(s.tree.nodes))
			}
			if st.Verdict == nil {
				return fmt.Errorf("rollout.resume: step %d: node %d has no verdict", i, st.Node)
			}
			s.tree.add(st.Parent, st.Action, st.Code, st.Model, st.EvalID, *st.Verdict, st.Reward)
		}
		if st.Error == errNothingToTune {
			s.untunable[st.Parent] = true
		}
		s.count(st)
	}
	return nil
}
