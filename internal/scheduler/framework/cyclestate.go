package framework

// StateKey names a plugin's slot in the cycle state.
type StateKey string

// StateData is anything a plugin keeps between its extension points in one cycle.
type StateData interface {
	Clone() StateData
}

// CycleState is the per-pod, per-cycle scratch space shared by plugins.
type CycleState struct {
	data map[StateKey]StateData
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
	return &CycleState{data: map[StateKey]StateData{}}
}

// Read returns the data under key, or nil.
func (c *CycleState) Read(key StateKey) StateData { return c.data[key] }

// Write stores data under key.
func (c *CycleState) Write(key StateKey, d StateData) { c.data[key] = d }

// Clone deep-copies the state (preemption evaluates candidates on copies).
func (c *CycleState) Clone() *CycleState {
	n := &CycleState{data: make(map[StateKey]StateData, len(c.data))}
	for k, v := range c.data {
		if v != nil {
			n.data[k] = v.Clone()
		}
	}
	n.SkipFilterPlugins = c.SkipFilterPlugins
	n.SkipScorePlugins = c.SkipScorePlugins
	n.FilterSkips = c.FilterSkips
	return n
}
