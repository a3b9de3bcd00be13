// Package inert decides whether a case's markup cannot run script, nor reach past
// the document it is written into: such a case may be written into the window an
// earlier inert case used (document.open, no navigation), because nothing it does
// can outlive its document or be seen by the next case (docs/untrusted.md, "Inert
// cases"). Everything else keeps a new document per case.
//
// The decision is an allowlist over the tree an HTML5 parser builds
// (golang.org/x/net/html, the parser browsers' algorithm is written down as):
// every element, in its namespace, and every attribute must be known inert. It is
// never a pattern over the text. Where the Go parser and an engine's parser could
// disagree (a comment, raw text or RCDATA that hides what looks like a tag), the
// case is not inert: anything the classifier is unsure of takes the fresh path.
package inert

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxBytes bounds the markup Check parses: a larger case takes the fresh path
// without being parsed (parsing is the oracle's CPU, and big cases are rare).
const maxBytes = 256 << 10

// Check reports whether markup is inert; when it is not, why names the first
// thing that made it so, for the log.
func Check(markup string) (ok bool, why string) {
	keys, why := Judge(markup)
	return keys != nil, why
}

// Judge is Check that also answers, for inert markup, the keys of the tree the
// classifier built and allowed (never nil then): the engine's inert check
// (inpage/case.js) accepts an engine's document only if every element and
// attribute it holds, or ever held, has one of these keys. A key is "e NS NAME"
// for an element and "a NS NAME ATTR" for an attribute, NS being html, svg or math
// and ATTR the attribute's qualified name; the attributes whose value special
// judges (link rel, meta name, input type) carry it: "a html link rel=help".
func Judge(markup string) (keys []string, why string) {
	if len(markup) > maxBytes {
		return nil, fmt.Sprintf("over %d bytes", maxBytes)
	}
	if why := hiddenMarkup(markup); why != "" {
		return nil, why
	}
	doc, err := html.Parse(strings.NewReader(markup))
	if err != nil {
		return nil, "parse: " + err.Error()
	}
	if ok, why := walk(doc); !ok {
		return nil, why
	}
	if why := droppedRawText(markup, doc); why != "" {
		return nil, why
	}
	return treeKeys(doc), ""
}

// rawTextNames are the elements whose start tag switches an HTML tokenizer out of
// the data state (raw text, RCDATA, script data, plaintext), when the tree builder
// lets it: as a tag the tree builder ignores, x/net/html's tokenizer can still have
// switched (in "in column group" a <noscript> turns the rest into dropped text),
// where an engine's never left the data state and parses what follows as markup.
var rawTextNames = []string{"script", "style", "xmp", "iframe", "noembed", "noframes",
	"noscript", "plaintext", "textarea", "title"}

// droppedRawText names a raw-text, RCDATA or plaintext start tag that the markup
// could hold but the tree does not hold as an element. It counts over the text, not
// the tokens (a place the Go tokenizer read as text may be a tag to an engine's):
// every "<name" followed by a space, "/" or ">" (or the end), in any case, must be
// matched by an element of that name in the tree. Text or an attribute value that
// spells such a tag counts too, which sends a rare inert case the fresh way.
func droppedRawText(markup string, doc *html.Node) string {
	lower := strings.ToLower(markup)
	held := map[string]int{}
	for c := doc; c != nil; c = next(c, doc) {
		if c.Type == html.ElementNode {
			held[strings.ToLower(c.Data)]++
		}
	}
	for _, name := range rawTextNames {
		tag, n := "<"+name, 0
		for rest := lower; ; {
			i := strings.Index(rest, tag)
			if i < 0 {
				break
			}
			rest = rest[i+len(tag):]
			if rest == "" || strings.ContainsRune(" \t\n\f\r/>", rune(rest[0])) {
				n++
			}
		}
		if n > held[name] {
			return fmt.Sprintf("a <%s> start tag the tree does not hold", name)
		}
	}
	return ""
}

// valued are the attributes whose key holds the value: those special judges by it.
var valued = map[string]bool{"html link rel": true, "html meta name": true, "html input type": true}

// treeKeys are the keys (Judge) of the elements and attributes under doc, sorted.
func treeKeys(doc *html.Node) []string {
	seen := map[string]bool{}
	for c := doc; c != nil; c = next(c, doc) {
		if c.Type != html.ElementNode {
			continue
		}
		ns := c.Namespace
		if ns == "" {
			ns = "html"
		}
		name := ns + " " + c.Data
		seen["e "+name] = true
		for _, a := range c.Attr {
			k := a.Key
			if a.Namespace != "" {
				k = a.Namespace + ":" + a.Key
			}
			k = name + " " + k
			if valued[k] {
				k += "=" + a.Val
			}
			seen["a "+k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// walk checks every node under n.
func walk(n *html.Node) (bool, string) {
	for c := n; c != nil; c = next(c, n) {
		switch c.Type {
		case html.ElementNode:
			if why := element(c); why != "" {
				return false, why
			}
		case html.DocumentNode, html.TextNode, html.CommentNode, html.DoctypeNode:
		default:
			return false, fmt.Sprintf("node type %d", c.Type)
		}
	}
	return true, ""
}

// next is the node after c in tree order within root, or nil.
func next(c, root *html.Node) *html.Node {
	if c.FirstChild != nil {
		return c.FirstChild
	}
	for ; c != root; c = c.Parent {
		if c.NextSibling != nil {
			return c.NextSibling
		}
	}
	return nil
}

// element names what makes n not inert, or "".
func element(n *html.Node) string {
	name := n.Data
	switch n.Namespace {
	case "":
		if !htmlElements[name] && !customElementName(name) {
			return "element <" + name + ">"
		}
		for _, a := range n.Attr {
			if why := htmlAttribute(n, a); why != "" {
				return why
			}
		}
		if why := special(n); why != "" {
			return why
		}
	case "svg":
		if !svgElements[name] {
			return "svg element <" + name + ">"
		}
		return foreignAttributes(n)
	case "math":
		if !mathElements[name] {
			return "math element <" + name + ">"
		}
		return foreignAttributes(n)
	default:
		return "namespace " + n.Namespace
	}
	return ""
}

// special checks the elements that are inert only with some attribute values.
func special(n *html.Node) string {
	switch n.DataAtom {
	case atom.Meta:
		// <meta charset> and the names WPT files use to describe themselves; never
		// http-equiv (refresh navigates, a CSP outlives document.open), nor a name
		// that sets document state (referrer, color-scheme, viewport).
		for _, a := range n.Attr {
			if a.Key == "name" && !metaNames[strings.ToLower(strings.TrimSpace(a.Val))] {
				return "<meta name=" + a.Val + ">"
			}
		}
	case atom.Link:
		// Only the links WPT files describe themselves with, which fetch nothing.
		rel, ok := attr(n, "rel")
		if !ok || !linkRels[strings.ToLower(strings.TrimSpace(rel))] {
			return "<link rel=" + rel + ">"
		}
	case atom.Input:
		// type=image fetches and submits; the others are form controls.
		if t, _ := attr(n, "type"); strings.EqualFold(strings.TrimSpace(t), "image") {
			return "<input type=image>"
		}
	case atom.Template:
		// The Go parser keeps template contents as children, which walk checks too;
		// a declarative shadow root (shadowrootmode) is not in the allowlist.
	}
	return ""
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// htmlAttribute names what makes a on the HTML element n not inert, or "".
func htmlAttribute(n *html.Node, a html.Attribute) string {
	k := a.Key
	switch {
	case a.Namespace != "":
		return "attribute " + a.Namespace + ":" + k
	case htmlAttributes[k], strings.HasPrefix(k, "data-"), strings.HasPrefix(k, "aria-"):
		return ""
	case k == "rel" && n.DataAtom == atom.Link, k == "content" && n.DataAtom == atom.Meta:
		return "" // checked by special
	case k == "href" && n.DataAtom == atom.Link:
		return "" // a link special lets through fetches nothing
	}
	return fmt.Sprintf("attribute %s on <%s>", k, n.Data)
}

// foreignAttributes names what makes an attribute of the SVG or MathML element n
// not inert: event handlers, and anything that names a resource or a link (href,
// xlink:href, src), which an animation could also turn into a javascript: URL.
func foreignAttributes(n *html.Node) string {
	for _, a := range n.Attr {
		k := strings.ToLower(a.Key)
		switch {
		case strings.Trim(k, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != "":
			return fmt.Sprintf("attribute %q on <%s>", a.Key, n.Data)
		case a.Namespace == "xmlns", a.Namespace == "xml" && (k == "lang" || k == "space"):
		case a.Namespace != "":
			return "attribute " + a.Namespace + ":" + a.Key
		case strings.HasPrefix(k, "on"), strings.Contains(k, "href"), strings.Contains(k, "src"),
			k == "attributename", k == "actiontype":
			return fmt.Sprintf("attribute %s on <%s>", a.Key, n.Data)
		}
	}
	return ""
}

// customElementName says whether name is a valid custom element name: with no
// definition (no script defines one) it is an inert HTMLElement.
func customElementName(name string) bool {
	if !strings.Contains(name, "-") || name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	switch name {
	case "annotation-xml", "color-profile", "font-face", "font-face-src", "font-face-uri",
		"font-face-format", "font-face-name", "missing-glyph":
		return false
	}
	return true
}

// hiddenMarkup names a place where the Go parser and an engine's could disagree on
// what is a tag: a tag-like "<" inside a comment (where engines' comment ends could
// differ), or "</" inside raw text (style) or RCDATA (title, textarea), whose end
// tag is the only markup those can hold. A well-formed inert case has none.
func hiddenMarkup(markup string) string {
	z := html.NewTokenizer(strings.NewReader(markup))
	var rawIn string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if strings.Contains(string(z.Raw()), "<") {
				// The markup ends inside a tag or comment: engines drop it at EOF
				// as the Go tokenizer does, but nothing here depends on that.
				return "the markup ends inside a tag"
			}
			return ""
		case html.StartTagToken:
			name, _ := z.TagName()
			rawIn = ""
			switch string(name) {
			case "style", "title", "textarea":
				rawIn = string(name)
			}
		case html.CommentToken:
			if tagLike(z.Raw()[1:]) {
				return "a comment holds a tag"
			}
		case html.TextToken:
			if rawIn != "" && strings.Contains(string(z.Raw()), "</") {
				return "<" + rawIn + "> holds an end tag"
			}
		default:
			rawIn = ""
		}
	}
}

// tagLike says whether b holds "<" followed by a letter, "/", "!" or "?".
func tagLike(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '<' {
			continue
		}
		c := b[i+1] | 0x20
		if (c >= 'a' && c <= 'z') || b[i+1] == '/' || b[i+1] == '!' || b[i+1] == '?' {
			return true
		}
	}
	return false
}
