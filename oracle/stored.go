package oracle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser/environment"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/store"
)

// walkVersion names what the oracle itself does to produce an answer beyond the
// in-page programs that walkKey hashes: the Go side of the settle point, the walks'
// post-processing (Geometry's empty rects, reflection.ParseWalk, trace.Run.Decode), the
// backends' Go side (including how they fill the programs' templates). Bump it with
// any change there that can change an answer: stored answers keyed on the old version
// are then never served. Changes to the in-page programs (every file under inpage/,
// and each route's own, under its inpage/) or the style subset need no bump: their
// text is hashed into the key.
//
// 2: the reset after a trace or url case no longer leaves an about:blank that
// inherited that case's origin (Chromium, Firefox): an html case stored after a
// trace may have been answered in it.
// 3: every html case runs in an about:blank the driver navigated to: Firefox's case
// after a trace ran in a new page's initial one (navigation.activation null, not
// "push").
const walkVersion = "3"

// walkKey is walkVersion plus a hash of every in-page program an answer comes from:
// the whole inpage tree and each route's own programs (every program is a file in
// one of those trees, so none can be left out), and the style subset the geometry
// walk is given. Every route of the table counts, not only the one that answered: the
// key already names the route, and one hash keeps the key's walk part one value per
// oracle (export and prune match it as a prefix).
func walkKey(routes browser.Routes) string {
	h := sha256.New()
	styles := strings.Join(dump.StyleProperties, ",")
	fmt.Fprintf(h, "%s\x00%d:%s", inpage.Hash(), len(styles), styles)
	for _, r := range routes {
		if p := r.Programs(); p != nil {
			fmt.Fprintf(h, "\x00%s:%s", r.Name(), inpage.HashFS(p))
		}
	}
	return "walk-" + walkVersion + "/" + hex.EncodeToString(h.Sum(nil))[:16]
}

// environmentKey is the pinned environment's version plus a hash of the files and
// prefs it gives the browsers, so an edit that forgot to bump EnvironmentVersion
// still misses.
var environmentKey = environment.Key

// profileEnvironment is environmentKey plus, for any profile but default (whose keys
// predate profiles), a hash of the profile's whole definition: its flags, prefs,
// grants and emulated values reach the engines as the environment's files do, so a
// profile edited without a new name still misses.
func profileEnvironment(profile string) string {
	p, err := profiles.Lookup(profile)
	if err != nil || p.Name == profiles.Default.Name {
		return environmentKey()
	}
	def, err := json.Marshal(p) // maps marshal in key order: the same definition, the same bytes
	if err != nil {
		panic(fmt.Sprintf("profile %s: %v", profile, err)) // plain data: cannot fail
	}
	h := sha256.Sum256(def)
	return environmentKey() + "+" + p.Name + "-" + hex.EncodeToString(h[:])[:12]
}

// Which request fields enter the key. Every field of Request must be named in
// exactly one of these lists (TestStoreKeyCoversEveryRequestField fails otherwise);
// a field named in none still enters the key (caseEncoding encodes every field not
// excluded), so a field added without thought makes answers miss, never wrong.
var (
	// keyedFields change the answer: their values are the case.
	keyedFields = []string{"Op", "HTML", "Script", "Probes", "ContentType"}
	// unkeyedFields never change one engine's answer: ID is echoed (except by a
	// kind that keys it, kindInfo.keysID: a trace's page title shows it), Engines
	// chooses which engines answer, each keyed by its own name; Verify says how many
	// runs an answer must rest on, not what it is (operation.go, verified).
	unkeyedFields = []string{"ID", "Engines", "Verify"}
	// unstoredFields make a request's answers unstorable when set: a url request's
	// answer depends on files under --docroot (the page and every subresource it
	// loads), which no key here covers; a screenshot is a picture (or a file under
	// --screenshot-dir named by the request's id), which is not worth keeping and is not
	// ground truth to serve again.
	unstoredFields = []string{"URL", "Screenshot"}
)

// caseEncoding is the request's canonical encoding for the store key: the JSON of an
// object holding every field not in unkeyedFields (for a trace, minus
// the id when its kind keys it), under its Go name, sorted, with its decoded value (so two
// spellings of one request, key order, escapes, whitespace, are one case). ok is
// false when the request must not be stored.
func caseEncoding(req *Request) (enc []byte, ok bool) {
	v := reflect.ValueOf(req).Elem()
	t := v.Type()
	fields := map[string]any{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		fv := v.Field(i)
		if contains(unstoredFields, f.Name) {
			if !fv.IsZero() {
				return nil, false
			}
			continue
		}
		if contains(unkeyedFields, f.Name) && !(f.Name == "ID" && kindFor(req.Op).info().keysID) {
			continue
		}
		if !f.IsExported() {
			return nil, false // cannot be encoded: never guess that it does not matter
		}
		fields[f.Name] = fv.Interface()
	}
	b, err := json.Marshal(fields) // map keys sorted
	if err != nil {
		return nil, false
	}
	return b, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// caseHash is the hex SHA-256 of caseEncoding.
func caseHash(req *Request) (string, bool) {
	enc, ok := caseEncoding(req)
	if !ok {
		return "", false
	}
	h := sha256.Sum256(enc)
	return hex.EncodeToString(h[:]), true
}

// storeMeta is the key of engine's (build b's) answer to the case hashed as c.
func (o *Oracle) storeMeta(req *Request, c, engine string, b engineBuild) store.Meta {
	kd := kindFor(req.Op)
	k := kd.info()
	op, walk := kd.about().Name, o.walk
	if k.walkExtra != nil {
		walk += k.walkExtra(o)
	}
	return store.Meta{Format: store.Format, Walk: walk, Environment: profileEnvironment(o.profile), Profile: o.profile,
		Engine: engine, EngineVersion: b.version, Route: b.route, Op: op, Case: c}
}

type noStoreKey struct{}

// withoutStore marks ctx's requests as live only: the store is neither read nor
// written (the self-check).
func withoutStore(ctx context.Context) context.Context {
	return context.WithValue(ctx, noStoreKey{}, true)
}

type wireKey struct{}

// forTheWire marks ctx's requests as answered only to be written out (Serve): stored
// answers then go into the response as the JSON text they were stored as, never
// decoded and encoded again (that was most of a hit's time: about 4 ms for three
// dumps of a generated page).
func forTheWire(ctx context.Context) context.Context {
	return context.WithValue(ctx, wireKey{}, true)
}

// storedFanOut answers req with the store in front: engines whose answer to this
// case is stored (resting on at least runs identical runs, and --store-min-runs) are
// answered from it, the others live (k.measure), and every live answer that
// k.storable accepts is stored with the runs it rests on and its unstable items. A
// stored unstable answer is served with its unstable list, never as stable. Stored
// names the engines answered from the store, in launch order. A stored answer is
// the JSON text the response would carry: it is kept in raw when ctx is for the
// wire (forTheWire), else decoded into Answers by encoding/json. k.together, when
// not nil, lets a kind refuse a mix (a trace's engines share one origin): given the
// stored answers and how many launched engines were asked, false runs every engine
// live.
func storedFanOut[T any](ctx context.Context, o *Oracle, req *Request, k *kind[T], runs int) (resp response[T]) {
	resp.ID, resp.kind = req.ID, k
	live := func(names []string) {
		resp.Answers, resp.Errors, resp.Unstable = k.measure(ctx, o, req, names, runs)
	}
	if o.store == nil || ctx.Value(noStoreKey{}) != nil {
		live(req.Engines)
		return resp
	}
	c, ok := caseHash(req)
	if !ok {
		live(req.Engines)
		return resp
	}
	named := len(req.Engines) > 0
	names := uniq(req.Engines)
	if !named {
		names = o.requestEngines()
	}
	// An engine's build is part of the key. One still starting whose build is not
	// known yet (storeBuild) is waited for, as fanOut waits for it; one that then fails
	// to serve is left out of a request that named no engine, and reported by fanOut
	// to one that named it.
	metas := map[string]store.Meta{}
	var list []store.Meta
	dropped := map[string]bool{}
	for _, n := range names {
		b, ok := o.storeBuild(n)
		if !ok {
			p, err := o.enginePool(ctx, n) // within the startup's own bound
			if err != nil {
				dropped[n] = !named && errors.Is(err, browser.ErrNotLaunched)
				continue
			}
			b = buildOf(p)
		}
		metas[n] = o.storeMeta(req, c, n, b)
		list = append(list, metas[n])
	}
	found := o.store.LookupAnswers(ctx, list, store.LookupOptions{MinRuns: max(runs, o.storeMinRuns)})
	hits := map[string]store.Answer{}
	texts := map[string][]byte{}
	for n, m := range metas {
		if a, ok := found[store.KeyOf(m)]; ok {
			hits[n], texts[n] = a, a.Answer
		}
	}
	if len(hits) > 0 && k.together != nil && !k.together(texts, len(metas)) {
		hits = map[string]store.Answer{}
	}
	wire := ctx.Value(wireKey{}) != nil
	decoded := map[string]T{}
	if !wire {
		for n, a := range hits {
			var v T
			if err := json.Unmarshal(a.Answer, &v); err != nil {
				o.log.Warn().Str("engine", n).Err(err).Msg("stored answer does not decode; answering live")
				delete(hits, n)
				continue
			}
			decoded[n] = v
		}
	}
	var measured []string
	for _, n := range names {
		if _, ok := hits[n]; !ok && !dropped[n] {
			measured = append(measured, n)
		}
	}
	resp.Answers, resp.Errors = map[string]T{}, map[string]string{}
	if len(measured) > 0 {
		live(measured)
	}
	for n, v := range resp.Answers {
		if _, ok := metas[n]; !ok || (k.storable != nil && !k.storable(v)) {
			continue
		}
		// Keyed by the build that answered: the one looked up by may have been
		// known only from a fingerprint (warmstart.go).
		b, ok := o.storeBuild(n)
		if !ok {
			continue
		}
		answer, err := json.Marshal(v)
		if err != nil || len(answer) > k.limit(o) { // over the bound: an error on the way out
			continue
		}
		o.store.Put(store.Record{Meta: o.storeMeta(req, c, n, b), ID: req.ID, Answer: answer, Runs: runs, Unstable: resp.Unstable[n]})
	}
	for _, n := range names {
		a, ok := hits[n]
		if !ok {
			continue
		}
		resp.Stored = append(resp.Stored, n)
		if a.Unstable != nil {
			if resp.Unstable == nil {
				resp.Unstable = map[string][]string{}
			}
			resp.Unstable[n] = a.Unstable
		}
		if wire {
			if resp.raw == nil {
				resp.raw = map[string]json.RawMessage{}
			}
			resp.raw[n] = a.Answer
		} else {
			resp.Answers[n] = decoded[n]
		}
	}
	if len(resp.Stored) > 0 {
		o.log.Debug().RawJSON("id", req.ID).Strs("stored", resp.Stored).Strs("live", measured).Msg("answered from the store")
	}
	return resp
}

// StoreDiff is the store's Options.Diff: two live answers of one key that differ only
// within the vote's tolerances are one answer; any other difference makes the key
// unstable (docs/store.md, "Stability: runs and unstable keys").
func StoreDiff(op string, stored, live []byte) ([]string, error) {
	return kinds.UnstableAnswers(op, [][]byte{stored, live})
}

// withRaw is a response's answers map as JSON text per engine: the live answers
// encoded, the stored ones as stored (what json.Marshal made of the live answer they
// were), so the response encodes to the bytes it would with them decoded.
func withRaw[T any](answers map[string]T, raw map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	all := make(map[string]json.RawMessage, len(answers)+len(raw))
	for n, v := range answers {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		all[n] = b
	}
	for n, b := range raw {
		all[n] = b
	}
	return all, nil
}

// StoreVersions are the walk and environment parts of the store keys of an oracle
// with route table routes under profile (a trace's walk part has its limits
// appended), for tools that read the store.
func StoreVersions(profile string, routes browser.Routes) (walk, environment string) {
	return walkKey(routes), profileEnvironment(profile)
}
