package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The pixel verdict of a reftest, as wptrunner gives it (executors/base.py): the
// test's screenshot against each reference's, in the same engine, exactly or within
// the test's <meta name=fuzzy> (docs/web-content.md, "wpt run").

// pixelDiff compares two PNG screenshots (base64) as wptrunner's get_differences
// does with PIL: the per-channel difference of each pixel's RGB, a pixel counted when
// the difference's luma (ITU-R 601, PIL's "L" conversion) is not zero, and the
// largest channel difference over the counted pixels.
func pixelDiff(a, b string) (maxChannel, pixels int, err error) {
	ia, ib, err := decodePair(a, b)
	if err != nil {
		return 0, 0, err
	}
	eachPixel(ia, ib, func(_, _ int, c1, c2 [3]uint32, differs bool) {
		if differs {
			pixels++
			maxChannel = max(maxChannel, absDiff8(c1[0], c2[0]), absDiff8(c1[1], c2[1]), absDiff8(c1[2], c2[2]))
		}
	})
	return maxChannel, pixels, nil
}

// eachPixel calls fn for every pixel of two images of one size (decodePair), with
// both colours (16-bit RGB) and whether they differ by wptrunner's rule
// (pixelDiffers): the reftest verdict (pixelDiff) and the reftest view's diff image
// (diffImage) read the same pixels by the same rule.
func eachPixel(ia, ib image.Image, fn func(x, y int, c1, c2 [3]uint32, differs bool)) {
	oa, ob := ia.Bounds().Min, ib.Bounds().Min
	size := ia.Bounds().Size()
	for y := 0; y < size.Y; y++ {
		for x := 0; x < size.X; x++ {
			r1, g1, b1, _ := ia.At(oa.X+x, oa.Y+y).RGBA()
			r2, g2, b2, _ := ib.At(ob.X+x, ob.Y+y).RGBA()
			fn(x, y, [3]uint32{r1, g1, b1}, [3]uint32{r2, g2, b2}, pixelDiffers(r1, g1, b1, r2, g2, b2))
		}
	}
}

// pixelDiffers is wptrunner's rule for one pixel (16-bit RGB values): the luma of
// the per-channel difference is not zero.
func pixelDiffers(r1, g1, b1, r2, g2, b2 uint32) bool {
	dr, dg, db := absDiff8(r1, r2), absDiff8(g1, g2), absDiff8(b1, b2)
	return (dr*19595+dg*38470+db*7471+0x8000)>>16 != 0
}

// absDiff8 is |a-b| of two 16-bit color values, in 8 bits.
func absDiff8(a, b uint32) int {
	d := int(a>>8) - int(b>>8)
	if d < 0 {
		return -d
	}
	return d
}

// decodePair decodes two screenshots of one size.
func decodePair(a, b string) (image.Image, image.Image, error) {
	ia, err := decodeScreenshot(a)
	if err != nil {
		return nil, nil, err
	}
	ib, err := decodeScreenshot(b)
	if err != nil {
		return nil, nil, err
	}
	if ia.Bounds().Size() != ib.Bounds().Size() {
		return nil, nil, fmt.Errorf("the screenshots differ in size: %v and %v", ia.Bounds().Size(), ib.Bounds().Size())
	}
	return ia, ib, nil
}

func decodeScreenshot(s string) (image.Image, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("screenshot: %v", err)
	}
	return img, nil
}

// fuzzy is one <meta name=fuzzy> value: the inclusive ranges the largest channel
// difference and the count of differing pixels must both fall in. Ref, when not
// "", is the reference it applies to (a path from the root); "" applies to every
// reference without a value of its own.
type fuzzy struct {
	Ref         string
	MaxDiff     [2]int
	TotalPixels [2]int
}

var (
	metaTag     = regexp.MustCompile(`(?is)<meta\b[^>]*>`)
	nameFuzzy   = regexp.MustCompile(`(?i)\bname\s*=\s*["']?fuzzy["'\s>/]`)
	contentAttr = regexp.MustCompile(`(?is)\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
)

// fuzzyMetas reads the <meta name=fuzzy> values of the test at rel (content b), in
// WPT's syntax: "[ref:]maxDifference=A[-B];totalPixels=C[-D]", the names optional,
// a single number meaning exactly that number. Malformed values are skipped, as the
// manifest refuses them.
func fuzzyMetas(rel string, b []byte) []fuzzy {
	var out []fuzzy
	for _, tag := range metaTag.FindAll(b, -1) {
		if !nameFuzzy.Match(tag) {
			continue
		}
		m := contentAttr.FindSubmatch(tag)
		if m == nil {
			continue
		}
		if f, ok := parseFuzzy(rel, string(m[1])+string(m[2])+string(m[3])); ok {
			out = append(out, f)
		}
	}
	return out
}

func parseFuzzy(rel, content string) (fuzzy, bool) {
	var f fuzzy
	values := content
	if key, v, ok := strings.Cut(content, ":"); ok && !strings.Contains(key, ";") {
		values = v
		for _, rt := range []string{"==", "!="} {
			if _, ref, ok := strings.Cut(key, rt); ok {
				key = ref
			}
		}
		f.Ref = path.Clean(path.Join(path.Dir(rel), strings.TrimSpace(key)))
		if strings.HasPrefix(strings.TrimSpace(key), "/") {
			f.Ref = path.Clean(strings.TrimSpace(key))[1:]
		}
	}
	parts := strings.Split(values, ";")
	if len(parts) != 2 {
		return f, false
	}
	named := map[string]*[2]int{"maxDifference": &f.MaxDiff, "totalPixels": &f.TotalPixels}
	positional := []*[2]int{&f.MaxDiff, &f.TotalPixels}
	for i, p := range parts {
		dst := positional[i]
		if name, v, ok := strings.Cut(p, "="); ok {
			if dst, ok = named[strings.TrimSpace(name)]; !ok {
				return f, false
			}
			p = v
		}
		lo, hi, isRange := strings.Cut(p, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil {
			return f, false
		}
		*dst = [2]int{a, b}
	}
	return f, true
}

// fuzzyFor is the fuzziness that applies to the reference at ref: its own value,
// else the test's unprefixed one, else none (nil: the screenshots must be identical).
func fuzzyFor(all []fuzzy, ref string) *fuzzy {
	var general *fuzzy
	for i := range all {
		switch all[i].Ref {
		case ref:
			return &all[i]
		case "":
			general = &all[i]
		}
	}
	return general
}

// pixelsEqual is wptrunner's "equal" for a screenshot pair: identical without
// fuzziness (or with 0;0), else within both ranges (a difference of nothing is
// equal whenever a range starts at 0).
func pixelsEqual(maxChannel, pixels int, f *fuzzy) bool {
	if f == nil || (f.MaxDiff == [2]int{} && f.TotalPixels == [2]int{}) {
		return pixels == 0
	}
	in := func(v int, r [2]int) bool { return r[0] <= v && v <= r[1] }
	return (pixels == 0 && f.TotalPixels[0] == 0) || (maxChannel == 0 && f.MaxDiff[0] == 0) ||
		(in(maxChannel, f.MaxDiff) && in(pixels, f.TotalPixels))
}
