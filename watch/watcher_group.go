package watch

// watcherSet is a set of watchers.
type watcherSet map[*watcher]struct{}

// watcherGroup indexes watchers by what they watch, for the write path:
// single-key watchers in a map, range watchers in an interval tree, so that
// finding the watchers of a key costs O(log n + matches), not O(watchers).
type watcherGroup struct {
	keys   map[string]watcherSet
	ranges intervalTree
	n      int
}

func newWatcherGroup() *watcherGroup {
	return &watcherGroup{keys: make(map[string]watcherSet)}
}

func (g *watcherGroup) add(w *watcher) {
	g.n++
	if w.r.IsSingle() {
		set := g.keys[string(w.r.Key)]
		if set == nil {
			set = make(watcherSet)
			g.keys[string(w.r.Key)] = set
		}
		set[w] = struct{}{}
		return
	}
	g.ranges.add(w.r, w)
}

func (g *watcherGroup) remove(w *watcher) {
	g.n--
	if w.r.IsSingle() {
		set := g.keys[string(w.r.Key)]
		delete(set, w)
		if len(set) == 0 {
			delete(g.keys, string(w.r.Key))
		}
		return
	}
	g.ranges.remove(w.r, w)
}

// matching calls fn for every watcher whose key or range holds key.
func (g *watcherGroup) matching(key []byte, fn func(*watcher)) {
	for w := range g.keys[string(key)] {
		fn(w)
	}
	g.ranges.stab(key, fn)
}

func (g *watcherGroup) len() int { return g.n }
