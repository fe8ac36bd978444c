package cluster

import (
	"hash/maphash"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A bucket of the default spam filter is implied by the log when replaying
// the logged occurrences of its key (source, object, type) from a full
// bucket gives it: every occurrence that took a token is in the log, at a
// time the log tells. Only the other buckets are kept in
// CorrelatorState.Buckets (docs/events.md#memory); at 100,000 pods that is
// a few hundred instead of over 100,000.

// liveBucket is a bucket as this process knows it (a cache: the log and
// Buckets say the same); implied says Buckets does not hold it.
type liveBucket struct {
	TokenBucket
	implied bool
}

// spamID is a default spam key's fields.
type spamID struct {
	component, host, kind, namespace, name, uid, apiVersion, eventType string
}

func spamIDOf(e *corev1.Event) spamID {
	r := &e.InvolvedObject
	return spamID{e.Source.Component, e.Source.Host, r.Kind, r.Namespace, r.Name, string(r.UID), r.APIVersion, e.Type}
}

// spamIDOfKey parses a default spam key; ok is false for another policy's.
func spamIDOfKey(key string) (spamID, bool) {
	p := strings.Split(key, "\x00")
	if len(p) != 9 || p[0] != "s" {
		return spamID{}, false
	}
	return spamID{p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]}, true
}

func (id spamID) of(e *corev1.Event) bool {
	r := &e.InvolvedObject
	return e.Source.Component == id.component && e.Source.Host == id.host && r.Kind == id.kind &&
		r.Namespace == id.namespace && r.Name == id.name && string(r.UID) == id.uid &&
		r.APIVersion == id.apiVersion && e.Type == id.eventType
}

// spamIndex lists the logged events by the hash of their default spam key.
type spamIndex struct {
	seed   maphash.Seed
	events map[uint64][]*corev1.Event
	// n events of the log are indexed; first and last of them tell
	// whether the log changed other than by appends.
	n           int
	first, last *corev1.Event
}

func (x *spamIndex) hash(id spamID) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	for _, part := range [...]string{id.component, id.host, id.kind, id.namespace, id.name, id.uid, id.apiVersion, id.eventType} {
		h.WriteString(part)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// spam returns the index. It indexes the log as it is when first asked
// (or changed other than by appends), and the events appended since only
// when all is true: a bucket is derived only for a key this process has not
// seen, whose events are all older, but pruning compares a kept bucket
// with everything the log will say after a reload.
func (c *CorrelatorState) spam(events []*corev1.Event, all bool) *spamIndex {
	x := c.spamIdx
	if x == nil || x.n > len(events) || (x.n > 0 && (events[0] != x.first || events[x.n-1] != x.last)) {
		x = &spamIndex{seed: maphash.MakeSeed(), events: map[uint64][]*corev1.Event{}}
		c.spamIdx = x
		all = true
	}
	if !all {
		return x
	}
	for _, e := range events[x.n:] {
		h := x.hash(spamIDOf(e))
		x.events[h] = append(x.events[h], e)
	}
	x.n = len(events)
	if x.n > 0 {
		x.first, x.last = events[0], events[x.n-1]
	}
	return x
}

// replay is the bucket the log implies for a default spam key, and false
// when some logged event of the key has occurrences whose times the log
// does not tell (more than two, at different times): then the bucket was
// kept in Buckets, and is full if it is no longer there.
func (c *CorrelatorState) replay(events []*corev1.Event, id spamID, p spamPolicy, all bool) (TokenBucket, bool) {
	x := c.spam(events, all)
	b := TokenBucket{Tokens: float64(p.burst)}
	var times []time.Time
	for _, e := range x.events[x.hash(id)] {
		if !id.of(e) {
			continue
		}
		switch first, last := e.FirstTimestamp.Time, e.LastTimestamp.Time; {
		case e.Count == 1:
			times = append(times, first)
		case e.Count == 2:
			times = append(times, first, last)
		case first.Equal(last):
			for range e.Count {
				times = append(times, first)
			}
		default:
			return b, false
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for _, t := range times {
		b.Tokens = b.advance(p, t) - 1
		b.Last = t
	}
	return b, true
}

// bucket is the live bucket of a spam key: from this process's cache, the
// kept buckets, or the log.
func (c *CorrelatorState) bucket(events []*corev1.Event, p spamPolicy, key string, out *corev1.Event) *liveBucket {
	if lb := c.live[key]; lb != nil {
		return lb
	}
	lb := &liveBucket{TokenBucket: TokenBucket{Tokens: float64(p.burst)}}
	if b := c.Buckets[key]; b != nil {
		lb.TokenBucket = *b
	} else if key[0] == 's' {
		if b, ok := c.replay(events, spamIDOf(out), p, false); ok {
			lb.TokenBucket, lb.implied = b, true
		}
	}
	if c.live == nil {
		c.live = map[string]*liveBucket{}
	}
	c.live[key] = lb
	return lb
}

// take takes a token from the live bucket, as x/time/rate's AllowN does
// for client-go's passive token bucket: the bucket refills qps tokens a
// second up to burst, and a request that would leave it negative is
// refused without changing it.
func (lb *liveBucket) take(p spamPolicy, now time.Time) bool {
	tokens := lb.advance(p, now) - 1
	if tokens < 0 {
		if wait := time.Duration((-tokens / float64(p.qps)) * float64(time.Second)); wait > 0 {
			return false
		}
	}
	lb.Tokens, lb.Last = tokens, now
	return true
}

// settle files the live bucket after a token was taken: implied stays true
// while the log tells the occurrence that took it (logged says so) at a
// time it keeps (whole seconds); otherwise the bucket is kept.
func (c *CorrelatorState) settle(key string, lb *liveBucket, logged bool, now time.Time) {
	lb.implied = lb.implied && logged && now.Nanosecond() == 0 && key[0] == 's'
	if lb.implied {
		delete(c.Buckets, key)
		return
	}
	if c.Buckets == nil {
		c.Buckets = map[string]*TokenBucket{}
	}
	b := lb.TokenBucket
	c.Buckets[key] = &b
}

// pruneBuckets forgets the kept buckets that are full at now and whose
// log-implied bucket is full too (or unknown, which reads as full).
func (c *CorrelatorState) pruneBuckets(events []*corev1.Event, now time.Time) {
	for k, b := range c.Buckets {
		p := spamPolicies[CorrelatorDefault]
		if k[0] != 's' {
			p = spamPolicies[CorrelatorAutoscaler]
		}
		if b.advance(p, now) < float64(p.burst) {
			continue
		}
		if id, ok := spamIDOfKey(k); ok {
			if d, ok := c.replay(events, id, p, true); ok && d.advance(p, now) < float64(p.burst) {
				continue
			}
		}
		// The live bucket stays: every key with events of this process
		// keeps one, which is what lets bucket skip their events.
		delete(c.Buckets, k)
	}
}
