package inert

// The allowlists. An element or attribute is here only if, whatever its value, it
// can neither run script (no event handler, no javascript: URL, no script element
// in any namespace), nor load or navigate anything (no URL-valued attribute), nor
// leave state in the window or document that outlives document.open (no
// http-equiv, no referrer policy, no focus, no nested browsing context). Anything
// missing here makes a case take the fresh path, which is always correct.

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// htmlElements are the HTML elements that do nothing by themselves. Absent on
// purpose: script, noscript, iframe, frame, frameset, object, embed, applet,
// portal, fencedframe, img, picture, source, video, audio, track, map, area,
// base, marquee (animated by its own widget), plaintext, xmp, noembed, noframes,
// and every element this list does not know.
var htmlElements = set(
	"html", "head", "body", "title", "style", "meta", "link",
	"div", "span", "p", "a", "b", "i", "u", "s", "em", "strong", "small", "big",
	"sub", "sup", "code", "kbd", "samp", "var", "tt", "pre", "br", "wbr", "hr",
	"h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd",
	"menu", "dir", "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th",
	"col", "colgroup", "blockquote", "q", "cite", "abbr", "dfn", "time", "mark",
	"ins", "del", "address", "article", "aside", "footer", "header", "main", "nav",
	"section", "hgroup", "search", "figure", "figcaption", "details", "summary",
	"dialog", "center", "font", "nobr", "strike", "acronym", "label", "fieldset",
	"legend", "button", "input", "select", "option", "optgroup", "textarea",
	"datalist", "output", "progress", "meter", "ruby", "rt", "rp", "rb", "rtc",
	"bdi", "bdo", "canvas", "template", "slot", "data", "form", "listing",
	"selectedcontent",
)

// htmlAttributes are the HTML attributes that carry no URL, handler or
// document-wide state. Absent on purpose: every on* handler, href (but on the
// links special allows), src, srcset, srcdoc, action, formaction, data, poster,
// background, cite, longdesc, ping, manifest, codebase, usemap, autofocus,
// http-equiv, is (a customized built-in), shadowrootmode (a declarative shadow
// root: the engine's inert check cannot see into a closed one, nor observe what
// its parser inserts there), and every attribute this list does not know.
var htmlAttributes = set(
	"id", "class", "style", "title", "lang", "dir", "hidden", "translate",
	"width", "height", "align", "valign", "colspan", "rowspan", "span", "cols",
	"rows", "size", "type", "value", "name", "placeholder", "disabled", "checked",
	"selected", "readonly", "multiple", "maxlength", "minlength", "min", "max",
	"step", "open", "start", "reversed", "border", "cellpadding", "cellspacing",
	"frame", "rules", "nowrap", "bgcolor", "color", "face", "wrap", "label",
	"for", "alt", "abbr", "headers", "scope", "summary", "tabindex", "role",
	"clear", "hspace", "vspace", "noshade", "compact", "char", "charoff",
	"datetime", "high", "low", "optimum", "list", "pattern", "required",
	"dirname", "inert", "popover", "charset", "content", "xmlns", "spellcheck",
	"draggable", "inputmode", "enterkeyhint", "autocapitalize", "accesskey",
	"slot", "part", "exportparts", "shadowrootdelegatesfocus",
	"shadowrootclonable", "shadowrootserializable", "text", "link", "vlink",
	"alink", "axis", "hreflang", "media", "sizes", "method", "target", "novalidate",
	"accept", "accept-charset", "enctype", "form", "autocomplete",
)

// metaNames are the <meta name> values WPT files describe themselves with.
var metaNames = set("assert", "flags", "author", "description", "keywords", "generator", "fuzzy")

// linkRels are the <link rel> values that fetch nothing (WPT's metadata links).
var linkRels = set("help", "author", "reviewer", "match", "mismatch")

// svgElements are the SVG elements that draw or group without fetching, linking or
// animating. Absent on purpose: script, a, use, image, feImage, foreignObject
// is present (its HTML content is checked as HTML), animate, animateMotion,
// animateTransform, set, discard, iframe, video, audio, handler, listener.
var svgElements = set(
	"svg", "g", "defs", "symbol", "rect", "circle", "ellipse", "line", "polyline",
	"polygon", "path", "text", "tspan", "textPath", "title", "desc", "metadata",
	"linearGradient", "radialGradient", "stop", "clipPath", "mask", "pattern",
	"marker", "foreignObject", "switch", "filter", "feGaussianBlur", "feOffset",
	"feBlend", "feColorMatrix", "feFlood", "feComposite", "feMerge", "feMergeNode",
	"style",
)

// mathElements are MathML's presentation elements. Absent on purpose: maction,
// annotation-xml (it can hold HTML the parser treats as such), semantics.
var mathElements = set(
	"math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt",
	"mroot", "msub", "msup", "msubsup", "munder", "mover", "munderover",
	"mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "mstyle",
	"mpadded", "mphantom", "menclose", "merror",
)
