package cluster

import (
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The legacy (core/v1) event recorders of client-go pass every event through
// a correlator before it reaches the API server: an aggregator that folds an
// object's eleventh and later distinct messages of one reason into a single
// "(combined from similar events)" event, a logger that turns repeats into
// count patches, and a per-object token bucket that drops what exceeds its
// budget. berth runs the same three steps in Record for every source that is
// neither an events.k8s.io series recorder nor berth's own notes
// (docs/events.md).

// Correlator options of the client-go recorders berth models
// (docs/events.md#options).
const (
	// aggregateMaxEvents distinct messages of one aggregate key within
	// aggregateInterval of each other make the last of them combined.
	aggregateMaxEvents = 10
	aggregateInterval  = 600 * time.Second
	// combinedPrefix starts the message of an aggregated event.
	combinedPrefix = "(combined from similar events): "
)

// CorrelatorKind picks the options of a source's correlator.
type CorrelatorKind uint8

const (
	// CorrelatorDefault is client-go's NewBroadcaster(): a bucket of 25
	// events per source and object, refilled one every 300 s.
	CorrelatorDefault CorrelatorKind = iota
	// CorrelatorAutoscaler is cluster-autoscaler's recorder: a bucket of
	// one event per reason, source and object, refilled one every 300 s;
	// its status ConfigMap is limited per message instead.
	CorrelatorAutoscaler
)

// spamPolicy is a spam filter's token bucket and key.
type spamPolicy struct {
	burst int
	// qps is a float32, as client-go's CorrelatorOptions holds it; the
	// bucket computes with its float64 widening, like x/time/rate.
	qps float32
	key func(e *corev1.Event) string
}

var spamPolicies = [...]spamPolicy{
	CorrelatorDefault:    {burst: 25, qps: 1. / 300., key: defaultSpamKey},
	CorrelatorAutoscaler: {burst: 1, qps: 1. / 300., key: autoscalerSpamKey},
}

// CorrelatorState is the correlators' memory that the event log does not
// already tell (docs/events.md#memory): each record missing here is the
// one derived from the log, and every record equal to its derivation is
// dropped, so the state holds only the exceptions.
type CorrelatorState struct {
	// Aggregates are the aggregation records, by aggregate key, that the
	// log does not imply.
	Aggregates map[string]*AggregateRecord `json:"aggregates,omitempty"`
	// Buckets are the spam filter's token buckets that the log does not
	// imply and that are not full, by spam key.
	Buckets map[string]*TokenBucket `json:"buckets,omitempty"`
	// Unsent are the logger's observations whose count is ahead of the
	// logged event's (occurrences the spam filter dropped), by logger key.
	Unsent map[string]*Observation `json:"unsent,omitempty"`

	// sweepAt is the size of the maps at which Record next prunes them.
	sweepAt int
	// uids are the involved objects that have, or had, an aggregation
	// record or an observation kept: only their events need the string
	// keys of those maps (nil until first needed after a load).
	uids map[types.UID]bool
	// scratch holds the event being correlated and its combined form.
	scratch [2]corev1.Event
	// live caches this process's buckets; spamIdx finds the logged events
	// of a spam key (correlator_buckets.go).
	live    liveBuckets
	spamIdx *spamIndex
	// aggScratch is the aggregation record being worked on when the log
	// implies it, aggMessages its messages' room.
	aggScratch  AggregateRecord
	aggMessages [aggregateMaxEvents]string
}

// kept says whether the object may have records kept in Aggregates or
// Unsent.
func (c *CorrelatorState) kept(uid types.UID) bool {
	if c.uids == nil {
		c.uids = map[types.UID]bool{}
		for k := range c.Aggregates {
			c.uids[keyUID(k)] = true
		}
		for k := range c.Unsent {
			c.uids[keyUID(k)] = true
		}
	}
	return c.uids[uid]
}

// keep notes that the object has records kept.
func (c *CorrelatorState) keep(uid types.UID) {
	c.kept(uid)
	c.uids[uid] = true
}

// keyUID is the involved object's uid in an aggregate or full key.
func keyUID(key string) types.UID {
	parts := strings.Split(key, "\x00")
	switch {
	case parts[0] == "a" && len(parts) > 6:
		return types.UID(parts[6])
	case parts[0] == "e" && len(parts) > 7:
		return types.UID(parts[7])
	}
	return ""
}

// AggregateRecord is what the aggregator knows of one aggregate key: the
// distinct messages seen (at most nine, in the order first seen) and when
// the key was last seen.
type AggregateRecord struct {
	Messages []string  `json:"messages"`
	Last     time.Time `json:"last"`
}

// TokenBucket is a spam filter's budget for one key: Tokens at Last.
type TokenBucket struct {
	Tokens float64   `json:"tokens"`
	Last   time.Time `json:"last"`
}

// Observation is the logger's count of one key and when it was first seen.
type Observation struct {
	Count int32     `json:"count"`
	First time.Time `json:"first"`
}

// joinKey joins key parts with a separator no name or kind holds (client-go
// joins them with nothing; the separator only keeps "ab"+"c" apart from
// "a"+"bc").
func joinKey(parts ...string) string { return strings.Join(parts, "\x00") }

// aggregateKey is client-go's EventAggregatorByReasonFunc key: source,
// involved object, type, reason and reporting controller and instance.
func aggregateKey(e *corev1.Event) string {
	r := &e.InvolvedObject
	return joinKey("a", e.Source.Component, e.Source.Host, r.Kind, r.Namespace, r.Name, string(r.UID), r.APIVersion,
		e.Type, e.Reason, e.ReportingController, e.ReportingInstance)
}

// fullKey is client-go's getEventKey: the aggregate identity (with the
// field path, without the reporting fields) and the message.
func fullKey(e *corev1.Event) string {
	r := &e.InvolvedObject
	return joinKey("e", e.Source.Component, e.Source.Host, r.Kind, r.Namespace, r.Name, r.FieldPath, string(r.UID), r.APIVersion,
		e.Type, e.Reason, e.Message)
}

// defaultSpamKey is client-go's getSpamKey: source, involved object and
// type, but not the reason.
func defaultSpamKey(e *corev1.Event) string {
	r := &e.InvolvedObject
	return joinKey("s", e.Source.Component, e.Source.Host, r.Kind, r.Namespace, r.Name, string(r.UID), r.APIVersion, e.Type)
}

// autoscalerSpamKey is cluster-autoscaler's: the reason joins the key, and
// the events of its status ConfigMap are keyed by message alone.
func autoscalerSpamKey(e *corev1.Event) string {
	r := &e.InvolvedObject
	if r.Kind == "ConfigMap" && r.Namespace == "kube-system" && r.Name == "cluster-autoscaler-status" {
		return joinKey("m", e.Message)
	}
	return joinKey("r", e.Reason, e.Source.Component, e.Source.Host, r.Kind, r.Namespace, r.Name, string(r.UID), r.APIVersion)
}

// aggregate runs the aggregator on an event about to be recorded and says
// whether it becomes the combined event. latest is the newest logged event
// of its identity, from which a record missing from memory is derived.
func (c *CorrelatorState) aggregate(key string, e *corev1.Event, latest *corev1.Event, now time.Time) (combined bool, rec *AggregateRecord) {
	rec = c.Aggregates[key]
	if rec == nil || now.Sub(rec.Last) > aggregateInterval {
		// Most records are the log's: worked on in scratch space, copied
		// only if kept.
		rec = &c.aggScratch
		*rec = AggregateRecord{Messages: c.aggMessages[:0]}
		if d := derivedAggregateOf(e, latest); d != nil && now.Sub(d.LastTimestamp.Time) <= aggregateInterval {
			rec.Messages, rec.Last = append(rec.Messages, d.Message), d.LastTimestamp.Time
		}
	}
	rec.Last = now
	if slices.Contains(rec.Messages, e.Message) {
		return false, rec
	}
	if len(rec.Messages)+1 < aggregateMaxEvents {
		rec.Messages = append(rec.Messages, e.Message)
		return false, rec
	}
	// The tenth distinct message: client-go adds it, combines the event and
	// drops one message of the set, whichever its map yields first. berth
	// drops the one just added, so the set stays the first nine messages
	// and only their repeats are logged apart (docs/events.md#aggregation).
	return true, rec
}

// derivedAggregateOf is the event from which the log implies an event's
// aggregation record: the newest logged event of the identity, if it is an
// ordinary event of the same API version; the record holds its message and
// was last seen at its last timestamp.
func derivedAggregateOf(e, latest *corev1.Event) *corev1.Event {
	if latest == nil || isCombined(latest) || latest.InvolvedObject.APIVersion != e.InvolvedObject.APIVersion ||
		latest.Source.Host != e.Source.Host {
		return nil
	}
	return latest
}

// aggregateImplied says whether the log implies rec, now and once saved:
// a saved timestamp keeps whole seconds only, so a record last seen within
// a second is kept whatever the log says.
func aggregateImplied(e, latest *corev1.Event, rec *AggregateRecord) bool {
	d := derivedAggregateOf(e, latest)
	return d != nil && len(rec.Messages) == 1 && d.Message == rec.Messages[0] && d.LastTimestamp.Time.Equal(rec.Last) &&
		rec.Last.Nanosecond() == 0
}

// keepAggregate stores rec unless the log implies it.
func (c *CorrelatorState) keepAggregate(key string, e, latest *corev1.Event, rec *AggregateRecord) {
	if aggregateImplied(e, latest, rec) {
		delete(c.Aggregates, key)
		return
	}
	if c.Aggregates == nil {
		c.Aggregates = map[string]*AggregateRecord{}
	}
	if rec == &c.aggScratch {
		rec = &AggregateRecord{Messages: slices.Clone(rec.Messages), Last: rec.Last}
	}
	c.Aggregates[key] = rec
	c.keep(e.InvolvedObject.UID)
}

// advance is the bucket's tokens at now.
func (b *TokenBucket) advance(p spamPolicy, now time.Time) float64 {
	last := b.Last
	if now.Before(last) {
		last = now
	}
	tokens := b.Tokens + now.Sub(last).Seconds()*float64(p.qps)
	return math.Min(tokens, float64(p.burst))
}

// sweep forgets what can no longer change an outcome: aggregation records
// idle longer than the interval and buckets that have refilled (a fresh
// bucket is full too). Record runs it whenever the maps have doubled since
// the last time, and only Record: a command that records nothing saves
// the memory it loaded, whichever way it moved the clock (docs/state.md's
// idle advance).
func (c *CorrelatorState) sweep(events []*corev1.Event, now time.Time) {
	if n := len(c.Aggregates) + len(c.Buckets); n >= c.sweepAt {
		c.prune(events, now)
		c.sweepAt = 2*(len(c.Aggregates)+len(c.Buckets)) + 1024
	}
}

// prune deletes the records that can no longer change an outcome at now.
func (c *CorrelatorState) prune(events []*corev1.Event, now time.Time) {
	for k, r := range c.Aggregates {
		if now.Sub(r.Last) > aggregateInterval {
			delete(c.Aggregates, k)
		}
	}
	c.pruneBuckets(events, now)
}

// isCombined tells an aggregated event: client-go builds it without the
// reporting controller every other legacy event carries.
func isCombined(e *corev1.Event) bool {
	return e.ReportingController == "" && strings.HasPrefix(e.Message, combinedPrefix)
}
