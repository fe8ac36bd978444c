package framework

// StateKey names a plugin's slot in the cycle state.
type StateKey string

// StateData is anything a plugin keeps between its extension points in one cycle.
type StateData interface {
	Clone() StateData
}

// CycleState is the per-pod, per-cycle scratch space shared by plugins.
// The slots are a short list searched in order rather than a map: a
// profile writes about a dozen keys, read on every node a cycle filters or
// scores, and comparing a constant key with the stored one (same length,
// usually the same bytes in memory) is cheaper than hashing it
// (docs/scheduler.md#failed-cycles-by-position).
type CycleState struct {
	keys []StateKey
	vals []StateData
	// SkipFilterPlugins and SkipScorePlugins name plugins whose PreFilter or
	// PreScore returned Skip.
	SkipFilterPlugins map[string]struct{}
	SkipScorePlugins  map[string]struct{}
	// FilterSkips is SkipFilterPlugins as a flag per Filter plugin of the
	// profile, derived once by the scheduler (nil until then).
	FilterSkips []bool
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{}
}

// Read returns the data under key, or nil.
func (c *CycleState) Read(key StateKey) StateData {
	for i, k := range c.keys {
		if k == key {
			return c.vals[i]
		}
	}
	return nil
}

// Write stores data under key.
func (c *CycleState) Write(key StateKey, d StateData) {
	for i, k := range c.keys {
		if k == key {
			c.vals[i] = d
			return
		}
	}
	c.keys = append(c.keys, key)
	c.vals = append(c.vals, d)
}

// Clone deep-copies the state (preemption evaluates candidates on copies).
// Slots holding nil are left out, as they were by the map this replaced.
func (c *CycleState) Clone() *CycleState {
	n := &CycleState{keys: make([]StateKey, 0, len(c.keys)), vals: make([]StateData, 0, len(c.vals))}
	for i, k := range c.keys {
		if v := c.vals[i]; v != nil {
			n.keys = append(n.keys, k)
			n.vals = append(n.vals, v.Clone())
		}
	}
	n.SkipFilterPlugins = c.SkipFilterPlugins
	n.SkipScorePlugins = c.SkipScorePlugins
	n.FilterSkips = c.FilterSkips
	return n
}
