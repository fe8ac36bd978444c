package upstream

import (
	"flag"
	"io"

	"k8s.io/klog/v2"
)

// The genuine scheduler logs through klog; its error logs (for example the
// PostFilter "not found" status, ../docs/scheduler.md) are expected here
// and would bury test output, so they are discarded.
func init() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
