package interpodaffinity

// Map views of the compact representations, for tests that compare them
// with the plain computation.

// toMap returns the counts as a new map: what a deep copy holds.
func (c *lazyCounts) toMap() topologyCounts {
	m := topologyCounts{}
	for _, src := range c.sources {
		for v, n := range src.counts {
			m[topologyPair{key: src.key, value: v}] += n
		}
	}
	for p, n := range c.overlay {
		if n == 0 {
			delete(m, p)
		} else {
			m[p] = n
		}
	}
	return m
}

// scoreMap is the score in map form (tests compare it with the pod walk).
func (f *fastScore) scoreMap() scoreMap {
	out := scoreMap{}
	for i := range f.keys {
		k := &f.keys[i]
		names := f.x.ValueNames(k.key)
		for id, t := range k.touched {
			if !t {
				continue
			}
			if out[k.key] == nil {
				out[k.key] = map[string]int64{}
			}
			out[k.key][names[id]] = k.byID[id]
		}
	}
	return out
}
