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

// eventIndex maps an event's identity (without and with its message) to the
// newest event with that identity.
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
	h := x.identity(id)
	if message != nil {
		return withMessage(h, *message)
	}
	return h.Sum64()
}

// identity is the hash state after an event's identity: its Sum64 is the
// identity's hash, and withMessage goes on from a copy of it to the hash
// of identity and message, so that both cost one pass over the identity.
func (x *eventIndex) identity(id eventID) maphash.Hash {
	var h maphash.Hash
	h.SetSeed(x.seed)
	for _, part := range [...]string{id.component, id.reason, id.eventType, id.ref.Kind, id.ref.Namespace, id.ref.Name, string(id.ref.UID)} {
		h.WriteString(part)
		h.WriteByte(0)
	}
	return h
}

// withMessage is the hash of an identity (h, taken by value) and message.
func withMessage(h maphash.Hash, message string) uint64 {
	h.WriteByte(1)
	h.WriteString(message)
	return h.Sum64()
}

// addHashed files an event under its two hashes (identity, and identity
// with message), taken by the caller: Record has them from its lookup,
// index takes them on every core.
func (x *eventIndex) addHashed(e *corev1.Event, byObject, byMessage uint64) {
	id := eventIDOf(e)
	if old := x.byObject[byObject]; old == nil || id.of(old) {
		x.byObject[byObject] = e
	} else {
		x.objectSpill[id.text()] = e
	}
	if old := x.byMessage[byMessage]; old == nil || (id.of(old) && messageKey(old) == messageKey(e)) {
		x.byMessage[byMessage] = e
	} else {
		x.messageSpill[id.text()+"\x00"+messageKey(e)] = e
	}
}

// latest is the newest event with this identity, or nil.
func (x *eventIndex) latest(id eventID) *corev1.Event {
	return x.latestHashed(id, x.hash(id, nil))
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

// withMessageHashed is the newest event with this identity and message
// (whose hash is h), or nil.
func (x *eventIndex) withMessageHashed(id eventID, message string, h uint64) *corev1.Event {
	if e := x.byMessage[h]; e != nil && id.of(e) && messageKey(e) == message {
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
	if object != "" && strings.Contains(message, object) {
		return message
	}
	if m, ok := x.messages[message]; ok {
		return m
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
		hashes := make([][2]uint64, n)
		runJobs((n+chunk-1)/chunk, func(j int) {
			for i := j * chunk; i < min((j+1)*chunk, n); i++ {
				e := s.Events[i]
				id := eventIDOf(e)
				h := x.identity(id)
				hashes[i] = [2]uint64{h.Sum64(), withMessage(h, messageKey(e))}
			}
		})
		for i, e := range s.Events {
			x.addHashed(e, hashes[i][0], hashes[i][1])
		}
	}
	return x
}
