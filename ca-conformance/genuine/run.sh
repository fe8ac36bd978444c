#!/bin/sh
# run.sh CA_SRC [go test args] — runs the genuine cluster-autoscaler's
# scale-up on ca-conformance scenarios and compares it with berth's.
#
# CA_SRC holds an extracted kubernetes/autoscaler tree (its cluster-autoscaler/
# directory); the Go module proxy does not serve that module, so it is built
# from the source tree. See ../README.md, "The genuine autoscaler".
#
# The module file is written in a temporary directory (never committed): it
# points the autoscaler at CA_SRC, berth and ca-conformance at this checkout,
# and pins every module of the autoscaler's build list to the version the
# autoscaler selects (its replace block included), so its packages build as
# upstream builds them.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 CA_SRC [go test args]" >&2; exit 2; }
ca=$(cd "$1/cluster-autoscaler" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
conf=$(cd "$here/.." && pwd)
root=$(cd "$conf/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
	echo "module github.com/berth-sim/berth/ca-conformance/genuine"
	echo
	echo "go 1.26.0"
	echo
	echo "require ("
	echo "	k8s.io/autoscaler/cluster-autoscaler v0.0.0"
	echo "	github.com/berth-sim/berth/ca-conformance v0.0.0"
	echo "	github.com/berth-sim/berth v0.0.0"
	echo ")"
	echo
	echo "replace k8s.io/autoscaler/cluster-autoscaler => $ca"
	echo "replace github.com/berth-sim/berth/ca-conformance => $conf"
	echo "replace github.com/berth-sim/berth => $root"
	(cd "$ca" && go list -m -f '{{if not .Main}}{{if .Replace}}{{.Path}} {{.Replace.Path}} {{.Replace.Version}}{{else}}{{.Path}} {{.Path}} {{.Version}}{{end}}{{end}}' all) |
		while read -r path rpath rver; do
			case "$rpath" in
			./* | ../*) echo "replace $path => $ca/$rpath" ;;
			*) echo "replace $path => $rpath $rver" ;;
			esac
		done
} >"$tmp/go.mod"
cat "$ca/go.sum" "$conf/go.sum" "$root/go.sum" | sort -u >"$tmp/go.sum"

cd "$here"
exec go test -modfile="$tmp/go.mod" -mod=mod -tags genuine "$@"
