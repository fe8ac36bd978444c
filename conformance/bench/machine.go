package bench

import (
	"os"
	"strings"
)

// LoadAverage is the machine's 1, 5 and 15 minute load averages as
// /proc/loadavg shows them, or "unknown"; the side-by-side reports print it
// before and after a run, since both sides' rates depend on it.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// CPUModel is the first "model name" of /proc/cpuinfo, or "unknown CPU".
func CPUModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
