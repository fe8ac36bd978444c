package cluster

import (
	"reflect"
	"runtime"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/store"
)

// The database's buckets (docs/state.md#layout): metaBucket holds the
// format version and every part of State that is not a stored object, one
// JSON value per field; eventsBucket the event log keyed by sequence; every
// other bucket one kind of Kinds, keyed by the object's Key.
const (
	metaBucket   = "meta"
	eventsBucket = "events"
)

// layout maps State's fields to buckets. It is built from the State type
// and the Kinds registry, so a kind added with its map and Kinds entry is
// stored without further code.
type layout struct {
	objects []objectBucket
	events  int // State field index of Events
	meta    []metaField
}

// objectBucket is one kind's map in State.
type objectBucket struct {
	name  string
	field int
	kind  *Kind
	proto bool
}

type metaField struct {
	name  string
	field int
}

var stateLayout = sync.OnceValue(buildLayout)

func buildLayout() *layout {
	l := &layout{events: -1}
	byType := map[reflect.Type]*Kind{}
	for _, k := range Kinds {
		byType[reflect.TypeOf(k.New())] = k
	}
	t := reflect.TypeOf(State{})
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := jsonName(f)
		if name == "" {
			continue
		}
		if f.Type == reflect.TypeOf([]*corev1.Event(nil)) {
			l.events = i
			continue
		}
		if f.Type.Kind() == reflect.Map && f.Type.Key().Kind() == reflect.String {
			if k := byType[f.Type.Elem()]; k != nil {
				l.objects = append(l.objects, objectBucket{name: k.GroupResource(), field: i, kind: k, proto: store.IsProto(k.New())})
				continue
			}
		}
		l.meta = append(l.meta, metaField{name: name, field: i})
	}
	if l.events < 0 {
		panic("cluster: State has no Events log")
	}
	return l
}

// chunk is how many entries one decode or encode job takes: large enough
// to amortise the scheduling, small enough to spread a kind over the cores.
const chunk = 512

// runJobs runs f(0..n-1) on every core; the jobs are independent.
func runJobs(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	wg.Wait()
}
