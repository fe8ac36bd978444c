package config

// knownFlags are the names of every command-line flag cluster-autoscaler
// itself accepts (its FAQ's parameter table). berth reads some of them
// (Options); the others change nothing berth simulates (logging, leader
// election, other clouds) and are accepted without effect, so that a
// Deployment copied from a real cluster applies as it is. A flag missing
// from this list is refused, as cluster-autoscaler's own flag parsing
// refuses it (docs/cluster-autoscaler.md#flags).
var knownFlags = []string{
	"add-dir-header", "address", "allowed-scheduler-names", "alsologtostderr", "async-node-groups",
	"aws-use-static-instance-list", "balance-similar-node-groups", "balancing-ignore-label", "balancing-label",
	"blocking-system-pod-distruption-timeout", "bulk-mig-instances-listing-enabled", "bypassed-scheduler-names",
	"capacity-buffer-controller-enabled", "capacity-buffer-pod-dry-run-enabled", "capacity-buffer-pod-injection-enabled",
	"capacity-quotas-enabled", "check-capacity-batch-processing", "check-capacity-processor-instance",
	"check-capacity-provisioning-request-batch-timebox", "check-capacity-provisioning-request-max-batch-size",
	"cloud-config", "cloud-provider", "cloud-provider-gce-l7lb-src-cidrs", "cloud-provider-gce-lb-src-cidrs",
	"cluster-name", "cluster-snapshot-parallelism", "clusterapi-cloud-config-authoritative",
	"cordon-node-before-terminating", "cores-total", "daemonset-eviction-for-empty-nodes",
	"daemonset-eviction-for-occupied-nodes", "debugging-snapshot-enabled", "drain-priority-config",
	"dynamic-node-delete-delay-after-taint-enabled", "emit-per-nodegroup-metrics", "enable-csi-node-aware-scheduling",
	"enable-dynamic-resource-allocation", "enable-proactive-scaleup", "enable-provisioning-requests",
	"enforce-node-group-min-size", "estimator", "expander", "expendable-pods-priority-cutoff",
	"fastpath-binpacking-enabled", "feature-gates", "force-delete-failed-nodes", "force-delete-unregistered-nodes",
	"force-ds", "frequent-loops-enabled", "gce-concurrent-refreshes", "gce-mig-instances-min-refresh-wait-time",
	"gpu-total", "grpc-expander-cert", "grpc-expander-url", "ignore-daemonsets-utilization",
	"ignore-mirror-pods-utilization", "ignore-taint", "initial-node-group-backoff-duration", "kube-api-content-type",
	"kube-client-burst", "kube-client-qps", "kubeconfig", "kubernetes", "leader-elect", "leader-elect-lease-duration",
	"leader-elect-renew-deadline", "leader-elect-resource-lock", "leader-elect-resource-name",
	"leader-elect-resource-namespace", "leader-elect-retry-period", "log-backtrace-at", "log-dir", "log-file",
	"log-file-max-size", "log-flush-frequency", "log-json-info-buffer-size", "log-json-split-stream",
	"log-text-info-buffer-size", "log-text-split-stream", "logging-format", "logtostderr",
	"max-allocatable-difference-ratio", "max-binpacking-time", "max-bulk-soft-taint-count", "max-bulk-soft-taint-time",
	"max-drain-parallelism", "max-failing-time", "max-free-difference-ratio", "max-graceful-termination-sec",
	"max-inactivity", "max-node-group-backoff-duration", "max-node-provision-time",
	"max-node-skip-eval-time-tracker-enabled", "max-node-startup-time", "max-nodegroup-binpacking-duration",
	"max-nodes-per-scaleup", "max-nodes-total", "max-pod-eviction-time", "max-scale-down-parallelism",
	"max-total-unready-percentage", "memory-difference-ratio", "memory-total", "min-replica-count", "namespace",
	"new-pod-scale-up-delay", "node-delete-delay-after-taint", "node-deletion-batcher-interval",
	"node-deletion-candidate-ttl", "node-deletion-delay-timeout", "node-group-auto-discovery",
	"node-group-backoff-reset-timeout", "node-info-cache-expire-time", "node-removal-latency-tracking-enabled",
	"nodes", "ok-total-unready-count", "one-output", "parallel-scale-up", "pod-injection-limit",
	"predicate-parallelism", "profiling", "provisioning-request-initial-backoff-time",
	"provisioning-request-max-backoff-cache-size", "provisioning-request-max-backoff-time",
	"record-duplicated-events", "regional", "scale-down-candidates-pool-min-count", "scale-down-candidates-pool-ratio",
	"scale-down-delay-after-add", "scale-down-delay-after-delete", "scale-down-delay-after-failure",
	"scale-down-delay-type-local", "scale-down-enabled", "scale-down-gpu-utilization-threshold",
	"scale-down-non-empty-candidates-count", "scale-down-simulation-timeout", "scale-down-unneeded-time",
	"scale-down-unready-enabled", "scale-down-unready-time", "scale-down-utilization-threshold",
	"scale-from-unschedulable", "scale-up-from-zero", "scan-interval", "scheduler-config-file", "skip-headers",
	"skip-log-headers", "skip-nodes-with-custom-controller-pods", "skip-nodes-with-local-storage",
	"skip-nodes-with-system-pods", "startup-taint", "startup-taint-prefix", "status-config-map-name", "status-taint",
	"stderrthreshold", "unremovable-node-recheck-timeout", "user-agent", "v", "vmodule", "write-status-configmap",
}
