package scheduling

// SameValues reports whether the two requirements list the same values
// (the allowed ones, or the excluded ones of a complement), as comparing
// their sorted Values would, without building the lists: the provisioning
// solve asks it for every pod tried on a NodeClaim
// (docs/karpenter-provisioning.md#speed-without-different-answers).
// Complement, bounds and minValues are not compared.
func (r *Requirement) SameValues(o *Requirement) bool {
	if len(r.values) != len(o.values) {
		return false
	}
	for v := range r.values {
		if _, ok := o.values[v]; !ok {
			return false
		}
	}
	return true
}
