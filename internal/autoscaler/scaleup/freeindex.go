package scaleup

// freeIndex keeps, for the new nodes of one estimate in their order, the
// free cpu, memory and pod slots NodeResourcesFit sees on each, and each
// block's maxima. The search for a node that takes a pod asks the
// scheduler only about nodes that could: a node without a slot, or with
// less free cpu or memory than the pod's positive request, fails
// NodeResourcesFit whatever else (scheduler.PreFiltered.FitBound), and a
// block whose maxima fall short holds no such node. The nodes asked about,
// and so the answer, are those of the plain walk, minus certain refusals.
type freeIndex struct {
	cpu, mem   []int64
	pods       []int
	bcpu, bmem []int64
	bpods      []int
}

const freeBlock = 32

// set records node i's free resources; i is an existing position or the
// next one (a node just added).
func (x *freeIndex) set(i int, cpu, mem int64, pods int) {
	if i == len(x.cpu) {
		x.cpu, x.mem, x.pods = append(x.cpu, cpu), append(x.mem, mem), append(x.pods, pods)
	} else {
		x.cpu[i], x.mem[i], x.pods[i] = cpu, mem, pods
	}
	b := i / freeBlock
	for len(x.bcpu) <= b {
		x.bcpu, x.bmem, x.bpods = append(x.bcpu, 0), append(x.bmem, 0), append(x.bpods, 0)
	}
	lo, hi := b*freeBlock, min((b+1)*freeBlock, len(x.cpu))
	x.bcpu[b], x.bmem[b], x.bpods[b] = x.cpu[lo], x.mem[lo], x.pods[lo]
	for k := lo + 1; k < hi; k++ {
		x.bcpu[b], x.bmem[b], x.bpods[b] = max(x.bcpu[b], x.cpu[k]), max(x.bmem[b], x.mem[k]), max(x.bpods[b], x.pods[k])
	}
}

func mayFit(freeCPU, freeMem int64, slots int, cpu, mem int64) bool {
	return slots >= 1 && (cpu <= 0 || freeCPU >= cpu) && (mem <= 0 || freeMem >= mem)
}

// next is the first position in [from, to) whose node may take a pod
// requesting cpu and memory, or -1.
func (x *freeIndex) next(from, to int, cpu, mem int64) int {
	for i := from; i < to; {
		b := i / freeBlock
		if i%freeBlock == 0 && !mayFit(x.bcpu[b], x.bmem[b], x.bpods[b], cpu, mem) {
			i += freeBlock
			continue
		}
		if mayFit(x.cpu[i], x.mem[i], x.pods[i], cpu, mem) {
			return i
		}
		i++
	}
	return -1
}
