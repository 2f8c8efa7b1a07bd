package watch

// watcherSet is a set of watchers.
type watcherSet map[*watcher]struct{}

// bagSmall is how many watchers a watcherBag holds in a slice.
const bagSmall = 8

// watcherBag is the watchers of one key or one range: a slice while they
// are few, a set past bagSmall. Most keys and ranges have one watcher,
// which then costs a pointer rather than a map of its own (about 200
// bytes a watcher, with ten thousand of them).
type watcherBag struct {
	few  []*watcher
	many watcherSet
}

func (b *watcherBag) add(w *watcher) {
	switch {
	case b.many != nil:
		b.many[w] = struct{}{}
	case len(b.few) < bagSmall:
		b.few = append(b.few, w)
	default:
		b.many = make(watcherSet, 2*bagSmall)
		for _, x := range b.few {
			b.many[x] = struct{}{}
		}
		b.many[w] = struct{}{}
		b.few = nil
	}
}

func (b *watcherBag) remove(w *watcher) {
	if b.many != nil {
		delete(b.many, w)
		return
	}
	for i, x := range b.few {
		if x == w {
			last := len(b.few) - 1
			b.few[i], b.few[last] = b.few[last], nil
			b.few = b.few[:last]
			return
		}
	}
}

func (b *watcherBag) len() int { return len(b.few) + len(b.many) }

func (b *watcherBag) each(fn func(*watcher)) {
	for _, w := range b.few {
		fn(w)
	}
	for w := range b.many {
		fn(w)
	}
}

// watcherGroup indexes watchers by what they watch, for the write path:
// single-key watchers in a map, range watchers in an interval tree, so that
// finding the watchers of a key costs O(log n + matches), not O(watchers).
type watcherGroup struct {
	keys   map[string]watcherBag
	ranges intervalTree
	n      int
}

func newWatcherGroup() *watcherGroup {
	return &watcherGroup{keys: make(map[string]watcherBag)}
}

func (g *watcherGroup) add(w *watcher) {
	g.n++
	if w.r.IsSingle() {
		bag := g.keys[string(w.r.Key)]
		bag.add(w)
		g.keys[string(w.r.Key)] = bag
		return
	}
	g.ranges.add(w.r, w)
}

func (g *watcherGroup) remove(w *watcher) {
	g.n--
	if w.r.IsSingle() {
		bag := g.keys[string(w.r.Key)]
		bag.remove(w)
		if bag.len() == 0 {
			delete(g.keys, string(w.r.Key))
		} else {
			g.keys[string(w.r.Key)] = bag
		}
		return
	}
	g.ranges.remove(w.r, w)
}

// matching calls fn for every watcher whose key or range holds key.
func (g *watcherGroup) matching(key []byte, fn func(*watcher)) {
	if bag, ok := g.keys[string(key)]; ok {
		bag.each(fn)
	}
	g.ranges.stab(key, fn)
}

func (g *watcherGroup) len() int { return g.n }
