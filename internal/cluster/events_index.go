package cluster

import (
	"hash/maphash"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The event index finds the event Record folds a repeat into. At 100,000
// pods the log holds over half a million events, so the index keys them by
// a 64-bit hash of their identity rather than by the identity's text (two
// strings of a hundred bytes or more per event), and every hit is checked
// against the event itself. An identity whose hash is already taken by
// another identity goes to a small exact map instead, so a collision never
// changes which event is found (docs/simulation-speed.md).

// eventID is what folds: who reported it, why, and about which object.
// The message joins it for events that fold only identical messages.
type eventID struct {
	component, reason, eventType string
	ref                          *corev1.ObjectReference
}

func (id eventID) of(e *corev1.Event) bool {
	r := &e.InvolvedObject
	return e.Source.Component == id.component && e.Reason == id.reason && e.Type == id.eventType &&
		r.Kind == id.ref.Kind && r.Namespace == id.ref.Namespace && r.Name == id.ref.Name && r.UID == id.ref.UID
}

func (id eventID) text() string {
	return id.component + "\x00" + id.reason + "\x00" + id.eventType + "\x00" + id.ref.Kind + "\x00" + id.ref.Namespace + "\x00" + id.ref.Name + "\x00" + string(id.ref.UID)
}

func eventIDOf(e *corev1.Event) eventID {
	return eventID{e.Source.Component, e.Reason, e.Type, &e.InvolvedObject}
}

// eventIndex maps an event's identity to the newest event with that
// identity, and an identity and message to the newest event with both when
// that is not the identity's newest (addHashed).
type eventIndex struct {
	// events is len(Events) when the index was last in step with it.
	events    int
	first     *corev1.Event
	seed      maphash.Seed
	byObject  map[uint64]*corev1.Event
	byMessage map[uint64]*corev1.Event
	// The exact maps hold the identities whose hash another one holds.
	objectSpill  map[string]*corev1.Event
	messageSpill map[string]*corev1.Event
	// messages shares one copy of each message text among the events
	// (most are the same few texts: "Started container", pulls...).
	messages map[string]string
	// slab is where new events are allocated from, eventSlab at a time.
	slab []corev1.Event
	// buf holds the bytes of the identity last hashed.
	buf []byte
}

// eventSlab is how many events are allocated together. An event is 600
// bytes, which Go rounds up to 640 when allocated alone; in a block they
// take 600, and the collector has one object to find instead of hundreds.
// An event removed from the log keeps its block alive until every event
// of the block is gone (the log rarely shrinks).
const eventSlab = 256

// newEvent returns a zero event for Record to fill in.
func (x *eventIndex) newEvent() *corev1.Event {
	if len(x.slab) == 0 {
		x.slab = make([]corev1.Event, eventSlab)
	}
	e := &x.slab[0]
	x.slab = x.slab[1:]
	return e
}

func (x *eventIndex) hash(id eventID, message *string) uint64 {
	b := appendIdentity(nil, id)
	if message != nil {
		return x.withMessage(b, *message)
	}
	return maphash.Bytes(x.seed, b)
}

// appendIdentity appends an event identity's bytes, each part closed by a
// zero byte: one maphash call over them is cheaper than a maphash.Hash
// written part by part (two calls a part).
func appendIdentity(b []byte, id eventID) []byte {
	for _, part := range [...]string{id.component, id.reason, id.eventType, id.ref.Kind, id.ref.Namespace, id.ref.Name, string(id.ref.UID)} {
		b = append(b, part...)
		b = append(b, 0)
	}
	return b
}

// identity hashes an event identity. It returns the hash and the
// identity's bytes (in the index's buffer, valid until the next call), from
// which withMessage hashes identity and message when it is needed.
func (x *eventIndex) identity(id eventID) (uint64, []byte) {
	x.buf = appendIdentity(x.buf[:0], id)
	return maphash.Bytes(x.seed, x.buf), x.buf
}

// withMessage is the hash of an identity (its bytes b) and a message; it
// writes past len(b) in b's array, never within it.
func (x *eventIndex) withMessage(b []byte, message string) uint64 {
	b = append(b, 1)
	return maphash.Bytes(x.seed, append(b, message...))
}

// addHashed files a new event of the log under its identity's hash, taken
// by the caller, as the newest of its identity. byMessage only holds the
// events an event of the same identity with another message displaced:
// the newest event of an identity and message is the identity's newest if
// that has the message, else the last one of that message displaced (a
// later one would have displaced it or be the newest). Most identities
// have one message, so most events never go into byMessage (half the map
// work and memory of filing every event twice). b is the identity's bytes
// or nil (then taken again if an event is displaced).
func (x *eventIndex) addHashed(e *corev1.Event, byObject uint64, b []byte) {
	id := eventIDOf(e)
	old := x.byObject[byObject]
	switch {
	case old == nil:
		x.byObject[byObject] = e
	case id.of(old):
		x.byObject[byObject] = e
		x.displace(id, old, e, b)
	default:
		// Another identity holds the hash.
		text := id.text()
		if old := x.objectSpill[text]; old != nil {
			x.displace(id, old, e, b)
		}
		x.objectSpill[text] = e
	}
}

// displace files old, no longer its identity's newest event, under its
// message if e's differs.
func (x *eventIndex) displace(id eventID, old, e *corev1.Event, b []byte) {
	key := messageKey(old)
	if key == messageKey(e) {
		return
	}
	if b == nil {
		b = appendIdentity(nil, id)
	}
	h := x.withMessage(b, key)
	if cur := x.byMessage[h]; cur == nil || (id.of(cur) && messageKey(cur) == key) {
		x.byMessage[h] = old
	} else {
		x.messageSpill[id.text()+"\x00"+key] = old
	}
}

// latest is the newest event with this identity, or nil.
func (x *eventIndex) latest(id eventID) *corev1.Event {
	h, _ := x.identity(id)
	return x.latestHashed(id, h)
}

func (x *eventIndex) latestHashed(id eventID, h uint64) *corev1.Event {
	if e := x.byObject[h]; e != nil && id.of(e) {
		return e
	}
	if len(x.objectSpill) == 0 {
		return nil
	}
	return x.objectSpill[id.text()]
}

// withMessageOf is the newest event with this identity and message key,
// given the identity's newest event (latest) and bytes (b), or nil.
func (x *eventIndex) withMessageOf(id eventID, latest *corev1.Event, message string, b []byte) *corev1.Event {
	if latest == nil {
		return nil
	}
	if messageKey(latest) == message {
		return latest
	}
	if e := x.byMessage[x.withMessage(b, message)]; e != nil && id.of(e) && messageKey(e) == message {
		return e
	}
	if len(x.messageSpill) == 0 {
		return nil
	}
	return x.messageSpill[id.text()+"\x00"+message]
}

// intern returns the shared copy of a message text. A message naming its
// object ("Created pod: web-x1", "Successfully assigned ...") is one of a
// kind and kept as it is.
func (x *eventIndex) intern(message, object string) string {
	// Looked up first: most messages are shared ones; a message naming
	// this object may still equal one interned for another object, and
	// sharing it is as good.
	if m, ok := x.messages[message]; ok {
		return m
	}
	if object != "" && strings.Contains(message, object) {
		return message
	}
	x.messages[message] = message
	return message
}

// index returns the event index, rebuilding it if Events was changed other
// than through Record (loaded from disk, trimmed, appended to directly).
func (s *State) index() *eventIndex {
	x := &s.eventIndex
	var first *corev1.Event
	if len(s.Events) > 0 {
		first = s.Events[0]
	}
	if x.byObject == nil || x.events != len(s.Events) || x.first != first {
		n := len(s.Events)
		*x = eventIndex{
			events: n, first: first, seed: maphash.MakeSeed(),
			byObject: make(map[uint64]*corev1.Event, n), byMessage: make(map[uint64]*corev1.Event, n),
			objectSpill: map[string]*corev1.Event{}, messageSpill: map[string]*corev1.Event{},
			messages: map[string]string{},
		}
		// The first lookup of a loaded state indexes the whole log (95,000
		// events on the 5,000-node profile cluster): the hashes are taken
		// on every core, then filed in log order, so the newest event of
		// an identity is the one kept, as adding them one by one does.
		hashes := make([]uint64, n)
		runJobs((n+chunk-1)/chunk, func(j int) {
			var b []byte
			for i := j * chunk; i < min((j+1)*chunk, n); i++ {
				b = appendIdentity(b[:0], eventIDOf(s.Events[i]))
				hashes[i] = maphash.Bytes(x.seed, b)
			}
		})
		for i, e := range s.Events {
			x.addHashed(e, hashes[i], nil)
		}
	}
	return x
}
