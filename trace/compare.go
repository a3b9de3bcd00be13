package trace

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
)

// BufferTolerance is how far two engines' buffer samples ($buffer, $imageData,
// $audioBuffer payloads) may differ and still agree. Everything else in a trace
// compares exactly.
//
// A float sample pair (Float16/32/64Array, AudioBuffer channels) agrees when
// |a-b| <= Absolute + Relative*max(|a|,|b|), or both are NaN, or both are the same
// infinity. An integer typed-array sample pair (Uint8ClampedArray pixels, Int16Array,
// ...) agrees when |a-b| <= Integer. BigInt64/BigUint64 arrays and the untyped bytes of
// an ArrayBuffer, SharedArrayBuffer or DataView compare exactly: their element type
// says nothing about what a "close" value would be.
type BufferTolerance struct {
	Absolute float64 `json:"absolute"`
	Relative float64 `json:"relative"`
	Integer  float64 `json:"integer"`
}

// DefaultBufferTolerance is looser than geometry's 1/60 px, since engines' DSP and
// rasterizers round differently: 1e-4 absolute plus 1e-3 relative for float samples
// (a float32 sample in [-1, 1] carries about 6e-8 of rounding; two DSP
// implementations of the same graph drift by far more, far less than audibly), and 2
// levels out of 255 for integer samples (anti-aliasing and color conversion between
// rasterizers).
var DefaultBufferTolerance = BufferTolerance{Absolute: 1e-4, Relative: 1e-3, Integer: 2}

// mismatch is what kind of difference a Finding reports.
type mismatch string

const (
	// MismatchCount: the traces have different record counts; nothing else was paired.
	MismatchCount mismatch = "count"
	// MismatchTimedOut: one trace ended by trace.done(), the other by the timeout.
	MismatchTimedOut mismatch = "timed_out"
	// MismatchSecureContext: isSecureContext differed.
	MismatchSecureContext mismatch = "is_secure_context"
	// MismatchKind: the records at a position are of different kinds.
	mismatchKind mismatch = "kind"
	// MismatchLabel: same kind, different label.
	mismatchLabel mismatch = "label"
	// MismatchEventType: two events of different type.
	mismatchEventType mismatch = "event_type"
	// MismatchState: one settle fulfilled, the other rejected.
	mismatchState mismatch = "state"
	// MismatchErrorName: two $error values with different names.
	mismatchErrorName mismatch = "error_name"
	// MismatchValue: the values differ structurally (a key, a length, a leaf, a type).
	MismatchValue mismatch = "value"
	// MismatchBuffer: same buffer structure, samples out of tolerance.
	MismatchBuffer mismatch = "buffer"
)

// Finding is one difference between two traces.
type Finding struct {
	// Seq is the record position, -1 for a finding about the whole trace.
	Seq  int      `json:"seq"`
	Kind mismatch `json:"kind"`
	// Path leads into the record: "kind", "label", "type", "state", or "value" and on
	// into it, e.g. value.props.href.value or value.channels[1]. Empty for a whole-trace
	// finding.
	Path string `json:"path,omitempty"`
	// A and B render the differing parts as compact JSON, cut at 200 bytes.
	A string `json:"a,omitempty"`
	B string `json:"b,omitempty"`
	// For MismatchBuffer: the samples compared, how many were out of tolerance, the
	// first such index, and the largest absolute difference over all samples.
	Samples        int     `json:"samples,omitempty"`
	OutOfTolerance int     `json:"out_of_tolerance,omitempty"`
	FirstIndex     int     `json:"first_index,omitempty"`
	MaxAbsDiff     float64 `json:"max_abs_diff,omitempty"`
}

func (f Finding) String() string {
	s := fmt.Sprintf("record %d: %s", f.Seq, f.Kind)
	if f.Seq < 0 {
		s = "trace: " + string(f.Kind)
	}
	if f.Path != "" {
		s += " at " + f.Path
	}
	if f.Kind == MismatchBuffer {
		return s + fmt.Sprintf(": %d of %d samples out of tolerance (first at %d), max |diff| %g",
			f.OutOfTolerance, f.Samples, f.FirstIndex, f.MaxAbsDiff)
	}
	return s + ": " + f.A + " vs " + f.B
}

// result is the comparison of two traces.
type result struct {
	// Equal: the same record count and no finding at all.
	Equal bool `json:"equal"`
	// CountMismatch: the record counts differ (CountA, CountB), so no record was
	// compared; Findings then holds the count finding (and a timed_out one if any).
	CountMismatch bool      `json:"count_mismatch"`
	CountA        int       `json:"count_a"`
	CountB        int       `json:"count_b"`
	Findings      []Finding `json:"findings,omitempty"`
}

// maxFindings bounds one comparison's report; a pair of traces disagreeing everywhere
// says so in its first findings.
const maxFindings = 200

// Compare compares two traces record by record, in order (dump-format.md, "Trace
// protocol" -> "Comparison"). Besides the records it compares timed_out and
// is_secure_context, which describe how the trace ended and where it ran; it does not
// compare origin (its port is the oracle's, chosen per process), engine, version or
// profile.
func Compare(a, b *Trace, tol BufferTolerance) result {
	r := result{CountA: len(a.Records), CountB: len(b.Records)}
	if a.TimedOut != b.TimedOut {
		r.Findings = append(r.Findings, Finding{Seq: -1, Kind: MismatchTimedOut,
			A: strconv.FormatBool(a.TimedOut), B: strconv.FormatBool(b.TimedOut)})
	}
	if a.IsSecureContext != b.IsSecureContext {
		r.Findings = append(r.Findings, Finding{Seq: -1, Kind: MismatchSecureContext,
			A: strconv.FormatBool(a.IsSecureContext), B: strconv.FormatBool(b.IsSecureContext)})
	}
	if r.CountA != r.CountB {
		r.CountMismatch = true
		r.Findings = append([]Finding{{Seq: -1, Kind: MismatchCount,
			A: strconv.Itoa(r.CountA), B: strconv.Itoa(r.CountB)}}, r.Findings...)
		return r
	}
	for i := range a.Records {
		c := &comparer{seq: i, tol: tol, out: r.Findings}
		c.record(&a.Records[i], &b.Records[i])
		r.Findings = c.out
		if len(r.Findings) >= maxFindings {
			r.Findings = r.Findings[:maxFindings]
			break
		}
	}
	r.Equal = len(r.Findings) == 0
	return r
}

// CompareRecords compares two records at position seq, as Compare does, and returns
// the findings (none when they agree).
func CompareRecords(seq int, a, b *Record, tol BufferTolerance) []Finding {
	c := &comparer{seq: seq, tol: tol}
	c.record(a, b)
	return c.out
}

type comparer struct {
	seq int
	tol BufferTolerance
	out []Finding
}

func (c *comparer) add(kind mismatch, path string, a, b any) {
	if len(c.out) >= maxFindings {
		return
	}
	c.out = append(c.out, Finding{Seq: c.seq, Kind: kind, Path: path, A: render(a), B: render(b)})
}

func (c *comparer) record(a, b *Record) {
	if a.Kind != b.Kind {
		c.add(mismatchKind, "kind", a.Kind, b.Kind)
		return // a value and an event have nothing else in common
	}
	if a.Label != b.Label {
		c.add(mismatchLabel, "label", a.Label, b.Label)
	}
	if a.Type != b.Type {
		c.add(mismatchEventType, "type", a.Type, b.Type)
	}
	if a.State != b.State {
		c.add(mismatchState, "state", a.State, b.State)
	}
	if len(a.Value) == 0 && len(b.Value) == 0 {
		return
	}
	va, erra := decodeValue(a.Value)
	vb, errb := decodeValue(b.Value)
	if erra != nil || errb != nil {
		// Not JSON (never from the recorder): compare the text.
		if !bytes.Equal(a.Value, b.Value) {
			c.add(MismatchValue, "value", string(a.Value), string(b.Value))
		}
		return
	}
	c.value("value", va, vb)
}

func decodeValue(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

var identRe = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func keyPath(path, k string) string {
	if identRe.MatchString(k) {
		return path + "." + k
	}
	return path + "[" + strconv.Quote(k) + "]"
}

func isMarked(m map[string]any, marker string) bool {
	v, ok := m[marker].(bool)
	return ok && v
}

func (c *comparer) value(path string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			c.add(MismatchValue, path, a, b)
			return
		}
		c.object(path, x, y)
	case []any:
		y, ok := b.([]any)
		if !ok {
			c.add(MismatchValue, path, a, b)
			return
		}
		if len(x) != len(y) {
			c.add(MismatchValue, path+".length", len(x), len(y))
			return
		}
		for i := range x {
			c.value(path+"["+strconv.Itoa(i)+"]", x[i], y[i])
		}
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			c.add(MismatchValue, path, a, b)
			return
		}
		fx, errx := x.Float64()
		fy, erry := y.Float64()
		if errx != nil || erry != nil || fx != fy {
			if x != y {
				c.add(MismatchValue, path, a, b)
			}
		}
	default: // string, bool, nil
		if a != b {
			c.add(MismatchValue, path, a, b)
		}
	}
}

func (c *comparer) object(path string, a, b map[string]any) {
	switch {
	case isMarked(a, "$error") && isMarked(b, "$error"):
		if a["name"] != b["name"] {
			c.add(mismatchErrorName, path+".name", a["name"], b["name"])
		}
		return
	case isMarked(a, "$audioBuffer") && isMarked(b, "$audioBuffer"):
		c.fields(path, a, b, "channels")
		ca, oka := a["channels"].([]any)
		cb, okb := b["channels"].([]any)
		if !oka || !okb || len(ca) != len(cb) {
			c.value(path+".channels", a["channels"], b["channels"])
			return
		}
		for i := range ca {
			p := path + ".channels[" + strconv.Itoa(i) + "]"
			ma, oka := ca[i].(map[string]any)
			mb, okb := cb[i].(map[string]any)
			if !oka || !okb || !isMarked(ma, "$buffer") || !isMarked(mb, "$buffer") {
				c.value(p, ca[i], cb[i])
				continue
			}
			c.buffer(p, ma, mb)
		}
		return
	case isMarked(a, "$buffer") && isMarked(b, "$buffer"):
		c.buffer(path, a, b)
		return
	}
	c.fields(path, a, b)
}

// fields compares two objects key by key (missing and extra keys, then each common
// key, in sorted order), skipping the keys in skip.
func (c *comparer) fields(path string, a, b map[string]any, skip ...string) {
	skipped := func(k string) bool {
		for _, s := range skip {
			if k == s {
				return true
			}
		}
		return false
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if skipped(k) {
			continue
		}
		va, oka := a[k]
		vb, okb := b[k]
		switch {
		case !oka:
			c.add(MismatchValue, keyPath(path, k), "(absent)", vb)
		case !okb:
			c.add(MismatchValue, keyPath(path, k), va, "(absent)")
		default:
			c.value(keyPath(path, k), va, vb)
		}
	}
}

// buffer compares two $buffer objects: every field but base64 exactly (elementType,
// length, and an ImageData's marker, width and height), then the decoded samples
// within tolerance.
func (c *comparer) buffer(path string, a, b map[string]any) {
	before := len(c.out)
	c.fields(path, a, b, "base64")
	if len(c.out) > before {
		return // different types or shapes: the samples cannot be paired
	}
	et, _ := a["elementType"].(string)
	sa, _ := a["base64"].(string)
	sb, _ := b["base64"].(string)
	ba, erra := base64.StdEncoding.DecodeString(sa)
	bb, errb := base64.StdEncoding.DecodeString(sb)
	if erra != nil || errb != nil || len(ba) != len(bb) {
		if sa != sb {
			c.add(MismatchValue, path+".base64", truncate(sa), truncate(sb))
		}
		return
	}
	s := compareSamples(et, ba, bb, c.tol)
	if s.out > 0 && len(c.out) < maxFindings {
		c.out = append(c.out, Finding{Seq: c.seq, Kind: MismatchBuffer, Path: path,
			Samples: s.n, OutOfTolerance: s.out, FirstIndex: s.first, MaxAbsDiff: s.maxDiff})
	}
}

type sampleStats struct {
	n, out, first int
	maxDiff       float64
}

// elementSize and decoding per elementType; little-endian, as every engine here is.
func elementSize(et string) (size int, float, exact bool) {
	switch et {
	case "Int8Array", "Uint8Array", "Uint8ClampedArray":
		return 1, false, false
	case "Int16Array", "Uint16Array":
		return 2, false, false
	case "Int32Array", "Uint32Array":
		return 4, false, false
	case "Float16Array":
		return 2, true, false
	case "Float32Array":
		return 4, true, false
	case "Float64Array":
		return 8, true, false
	default: // BigInt64Array, BigUint64Array, DataView, ArrayBuffer, SharedArrayBuffer, unknown
		return 1, false, true
	}
}

func sample(et string, b []byte) float64 {
	le := binary.LittleEndian
	switch et {
	case "Int8Array":
		return float64(int8(b[0]))
	case "Int16Array":
		return float64(int16(le.Uint16(b)))
	case "Uint16Array":
		return float64(le.Uint16(b))
	case "Int32Array":
		return float64(int32(le.Uint32(b)))
	case "Uint32Array":
		return float64(le.Uint32(b))
	case "Float16Array":
		return float16(le.Uint16(b))
	case "Float32Array":
		return float64(math.Float32frombits(le.Uint32(b)))
	case "Float64Array":
		return math.Float64frombits(le.Uint64(b))
	default:
		return float64(b[0])
	}
}

// float16 decodes an IEEE 754 binary16.
func float16(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

func compareSamples(et string, a, b []byte, tol BufferTolerance) sampleStats {
	size, isFloat, exact := elementSize(et)
	st := sampleStats{n: len(a) / size, first: -1}
	for i := 0; i+size <= len(a); i += size {
		var ok bool
		var diff float64
		if exact {
			ok = bytes.Equal(a[i:i+size], b[i:i+size])
			if !ok {
				diff = math.Abs(float64(a[i]) - float64(b[i]))
			}
		} else {
			x, y := sample(et, a[i:i+size]), sample(et, b[i:i+size])
			ok, diff = agreeSample(x, y, isFloat, tol)
		}
		if !math.IsNaN(diff) && diff > st.maxDiff {
			st.maxDiff = diff
		}
		if !ok {
			if st.out == 0 {
				st.first = i / size
			}
			st.out++
		}
	}
	if st.out == 0 {
		st.first = 0
	}
	return st
}

func agreeSample(x, y float64, isFloat bool, tol BufferTolerance) (bool, float64) {
	if !isFloat {
		d := math.Abs(x - y)
		return d <= tol.Integer, d
	}
	switch {
	case math.IsNaN(x) && math.IsNaN(y):
		return true, 0
	case math.IsNaN(x) || math.IsNaN(y):
		return false, math.Inf(1)
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		if x == y {
			return true, 0
		}
		return false, math.Inf(1)
	}
	d := math.Abs(x - y)
	return d <= tol.Absolute+tol.Relative*math.Max(math.Abs(x), math.Abs(y)), d
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func render(v any) string {
	if s, ok := v.(string); ok && (s == "(absent)") {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b))
}
