package aws

import (
	"encoding/binary"
	"math/bits"
	"net/netip"

	"github.com/berth-sim/berth/internal/cluster"
)

// maxRandomProbes bounds the random draws before DrawAddress scans.
const maxRandomProbes = 32

// DrawAddress picks a free address among the n that start at first, as the
// IPAMs berth models hand them out: random probes from the state's seeded
// source, then a scan onward from the last probe. taken counts the addresses
// in use; the scan looks at taken+1 addresses at most, one of which must be
// free. Node addresses and pod addresses both come from here.
func DrawAddress(r *cluster.Rand, first netip.Addr, n, taken uint64, used func(netip.Addr) bool) (netip.Addr, bool) {
	if n == 0 {
		return netip.Addr{}, false
	}
	next := func() uint64 {
		if n <= 1 {
			return 0
		}
		return r.Uint64() % n
	}
	i := next()
	for probe := 0; probe < maxRandomProbes && used(AddrAdd(first, i)); probe++ {
		i = next()
	}
	for k := uint64(0); k < min(n, taken+1); k++ {
		if ip := AddrAdd(first, (i+k)%n); !used(ip) {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// AddrAdd returns the address off places after a (within one prefix: no
// overflow past the address family).
func AddrAdd(a netip.Addr, off uint64) netip.Addr {
	if a.Is4() {
		b := a.As4()
		binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(b[:])+uint32(off))
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	lo, carry := bits.Add64(lo, off, 0)
	hi += carry
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return netip.AddrFrom16(b)
}
