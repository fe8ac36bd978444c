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
// Buckets say the same); implied says Buckets does not need to hold it.
type liveBucket struct {
	TokenBucket
	implied bool
	// stored says Buckets may hold the bucket under key (the key is built
	// only for that: most buckets are implied all their life).
	stored bool
	key    string
	// id is the key's fields (the default policy's buckets are found by
	// their hash and told apart by them; the strings are the events').
	id spamID
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
	var buf [256]byte
	return spamHash(x.seed, buf[:0], id)
}

// spamHash hashes a default spam key's fields, each closed by a zero byte,
// in one maphash call; b is room for them.
func spamHash(seed maphash.Seed, b []byte, id spamID) uint64 {
	for _, part := range [...]string{id.component, id.host, id.kind, id.namespace, id.name, id.uid, id.apiVersion, id.eventType} {
		b = append(b, part...)
		b = append(b, 0)
	}
	return maphash.Bytes(seed, b)
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

// liveBuckets are the buckets of this process. The default policy's (a
// bucket per object, reporter and type: over 100,000 at 100,000 pods) are
// found by the hash of their key's fields, so that an event builds no key;
// a bucket whose hash another key holds, and cluster-autoscaler's, by key.
// Every bucket in Buckets has a live one: those loaded are made live when
// the first event is correlated, and settle stores only live ones; so a
// key without a live bucket is not in Buckets either.
type liveBuckets struct {
	seed   maphash.Seed
	hashed map[uint64]*liveBucket
	byKey  map[string]*liveBucket
	// last is the default policy's bucket used last: a pod's start-up
	// events come one after another from one kubelet, so most events
	// find it without a hash.
	last *liveBucket
}

// bucket is the live bucket of out's spam key: from this process's cache,
// the kept buckets, or the log.
func (c *CorrelatorState) bucket(events []*corev1.Event, p spamPolicy, policy CorrelatorKind, out *corev1.Event) *liveBucket {
	l := &c.live
	if l.hashed == nil {
		c.liveInit()
	}
	var h uint64
	var id spamID
	key := ""
	if policy == CorrelatorDefault {
		id = spamIDOf(out)
		if l.last != nil && l.last.id == id {
			return l.last
		}
		h = l.hash(id)
		lb := l.hashed[h]
		if lb != nil && lb.id == id {
			l.last = lb
			return lb
		}
		if lb != nil {
			key = p.key(out)
			if lb := l.byKey[key]; lb != nil {
				l.last = lb
				return lb
			}
		}
	} else {
		key = p.key(out)
		if lb := l.byKey[key]; lb != nil {
			return lb
		}
	}
	lb := &liveBucket{TokenBucket: TokenBucket{Tokens: float64(p.burst)}, key: key, id: id}
	if policy == CorrelatorDefault {
		if b, ok := c.replay(events, id, p, false); ok {
			lb.TokenBucket, lb.implied = b, true
		}
	}
	if key == "" {
		l.hashed[h] = lb
	} else {
		l.byKey[key] = lb
	}
	if policy == CorrelatorDefault {
		l.last = lb
	}
	return lb
}

// liveInit makes the buckets kept in Buckets live.
func (c *CorrelatorState) liveInit() {
	l := &c.live
	*l = liveBuckets{seed: maphash.MakeSeed(), hashed: map[uint64]*liveBucket{}, byKey: map[string]*liveBucket{}}
	for key, b := range c.Buckets {
		lb := &liveBucket{TokenBucket: *b, stored: true, key: key}
		id, ok := spamIDOfKey(key)
		if !ok {
			l.byKey[key] = lb
			continue
		}
		lb.id = id
		h := l.hash(id)
		if other := l.hashed[h]; other != nil {
			l.byKey[key] = lb
			continue
		}
		l.hashed[h] = lb
	}
}

func (l *liveBuckets) hash(id spamID) uint64 {
	var buf [256]byte
	return spamHash(l.seed, buf[:0], id)
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
// time it keeps (whole seconds); otherwise the bucket is kept. p and e
// (the event as recorded) build the key when Buckets needs it.
func (c *CorrelatorState) settle(lb *liveBucket, p spamPolicy, policy CorrelatorKind, e *corev1.Event, logged bool, now time.Time) {
	lb.implied = lb.implied && logged && now.Nanosecond() == 0 && policy == CorrelatorDefault
	if lb.implied {
		if lb.stored {
			delete(c.Buckets, lb.key)
			lb.stored = false
		}
		return
	}
	if c.Buckets == nil {
		c.Buckets = map[string]*TokenBucket{}
	}
	if lb.key == "" {
		lb.key = p.key(e)
	}
	b := lb.TokenBucket
	c.Buckets[lb.key] = &b
	lb.stored = true
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
