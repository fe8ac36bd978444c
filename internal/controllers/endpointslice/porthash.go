package endpointslice

import (
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Upstream orders and groups ports by hashes of their printed form
// (hashOf: go-spew, then FNV-128), and a sync hashes every selected pod's
// ports that way, for the slices and again for the legacy Endpoints. The
// printing is most of the controller's time, and a Service's pods have a
// handful of distinct port lists between them. So the hash of a port or a
// port list is kept under an exact, cheap encoding of its value: the same
// value always has the same hash, whatever pod it came from
// (docs/simulation-speed.md).

var portHashes sync.Map // encoding -> hashOf of the value

func memoHash(key string, v any) string {
	if h, ok := portHashes.Load(key); ok {
		return h.(string)
	}
	h := hashOf(v)
	portHashes.Store(key, h)
	return h
}

// The encodings spell out every field, nil pointers apart from empty
// values, and lengths before strings, so two values share an encoding only
// when they are equal. A leading letter tells the four types apart.

func writeStr(b *strings.Builder, p *string) {
	if p == nil {
		b.WriteString("-")
		return
	}
	b.WriteString(strconv.Itoa(len(*p)))
	b.WriteByte(':')
	b.WriteString(*p)
}

func writeSlicePort(b *strings.Builder, p *discoveryv1.EndpointPort) {
	writeStr(b, p.Name)
	if p.Port == nil {
		b.WriteString("-")
	} else {
		b.WriteString(strconv.Itoa(int(*p.Port)))
	}
	b.WriteByte(',')
	if p.Protocol == nil {
		b.WriteString("-")
	} else {
		s := string(*p.Protocol)
		writeStr(b, &s)
	}
	writeStr(b, p.AppProtocol)
	b.WriteByte(';')
}

func writeLegacyPort(b *strings.Builder, p *corev1.EndpointPort) {
	writeStr(b, &p.Name)
	b.WriteString(strconv.Itoa(int(p.Port)))
	b.WriteByte(',')
	s := string(p.Protocol)
	writeStr(b, &s)
	writeStr(b, p.AppProtocol)
	b.WriteByte(';')
}

// slicePortHash is hashOf(p).
func slicePortHash(p discoveryv1.EndpointPort) string {
	var b strings.Builder
	b.WriteString("d")
	writeSlicePort(&b, &p)
	return memoHash(b.String(), p)
}

// slicePortsHash is hashOf(ports).
func slicePortsHash(ports []discoveryv1.EndpointPort) string {
	var b strings.Builder
	b.WriteString("D")
	if ports == nil {
		b.WriteString("nil")
	}
	for i := range ports {
		writeSlicePort(&b, &ports[i])
	}
	return memoHash(b.String(), ports)
}

// legacyPortHash is hashOf(p).
func legacyPortHash(p corev1.EndpointPort) string {
	var b strings.Builder
	b.WriteString("e")
	writeLegacyPort(&b, &p)
	return memoHash(b.String(), p)
}

// legacyPortsHash is hashOf(ports).
func legacyPortsHash(ports []corev1.EndpointPort) string {
	var b strings.Builder
	b.WriteString("E")
	if ports == nil {
		b.WriteString("nil")
	}
	for i := range ports {
		writeLegacyPort(&b, &ports[i])
	}
	return memoHash(b.String(), ports)
}
