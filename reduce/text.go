package reduce

import (
	"slices"
	"strings"
)

// span is a byte range [lo, hi) of a text to delete.
type span struct{ lo, hi int }

// cutSpans deletes the union of spans (they may overlap or nest) from s.
func cutSpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	sp := slices.Clone(spans)
	slices.SortFunc(sp, func(a, b span) int { return a.lo - b.lo })
	var b strings.Builder
	at := 0
	for _, x := range sp {
		lo, hi := max(x.lo, at), min(x.hi, len(s))
		if lo >= hi {
			continue
		}
		b.WriteString(s[at:lo])
		at = hi
	}
	b.WriteString(s[at:])
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// words are a text's non-space runs, each with the whitespace before it.
func words(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		lo := i
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		for i < len(s) && !isSpace(s[i]) {
			i++
		}
		out = append(out, span{lo, i})
	}
	return out
}

// lines are a text's lines, each with its newline.
func lines(s string) []span {
	var out []span
	for lo := 0; lo < len(s); {
		hi := strings.IndexByte(s[lo:], '\n')
		if hi < 0 {
			hi = len(s)
		} else {
			hi += lo + 1
		}
		out = append(out, span{lo, hi})
		lo = hi
	}
	return out
}

// skipQuoted returns the index after a string or comment starting at i (JS and
// CSS share '...', "..." and /*...*/; line comments and template strings only
// when js), or i if none starts there.
func skipQuoted(s string, i int, js bool) int {
	switch c := s[i]; {
	case c == '\'' || c == '"' || (js && c == '`'):
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case c:
				return j + 1
			case '\n':
				if c != '`' {
					return j
				}
			}
		}
		return len(s)
	case c == '/' && i+1 < len(s) && s[i+1] == '*':
		if k := strings.Index(s[i+2:], "*/"); k >= 0 {
			return i + 2 + k + 2
		}
		return len(s)
	case js && c == '/' && i+1 < len(s) && s[i+1] == '/':
		if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
			return i + k
		}
		return len(s)
	}
	return i
}

// statements splits a script into statements at every brace depth: each ends
// at a ';', at a newline when nothing is open, or at the '}' closing a block
// that began the statement's line. Nested statements are units too, so the
// reducer can empty a function body; a cut that breaks the syntax is simply not
// interesting.
func statements(s string) []span {
	var out []span
	type frame struct {
		start int // where the current statement at this depth began
		open  int // parens and brackets open in it
	}
	stack := []frame{{start: -1}}
	begin := func(i int) {
		if top := &stack[len(stack)-1]; top.start < 0 && !isSpace(s[i]) {
			top.start = i
		}
	}
	end := func(i int) { // the statement at the top ends before i (exclusive)
		top := &stack[len(stack)-1]
		if top.start >= 0 && strings.TrimSpace(s[top.start:i]) != "" {
			out = append(out, span{top.start, i})
		}
		top.start, top.open = -1, 0
	}
	for i := 0; i < len(s); {
		if j := skipQuoted(s, i, true); j > i {
			begin(i)
			i = j
			continue
		}
		top := &stack[len(stack)-1]
		switch c := s[i]; c {
		case '(', '[':
			begin(i)
			top.open++
		case ')', ']':
			top.open = max(top.open-1, 0)
		case '{':
			begin(i)
			stack = append(stack, frame{start: -1})
		case '}':
			if len(stack) > 1 {
				end(i)
				stack = stack[:len(stack)-1]
				top = &stack[len(stack)-1]
				// A block closing at the start of a line ends its statement
				// (function and if bodies), unless an expression goes on.
				if top.open == 0 && (i+1 == len(s) || s[i+1] == '\n' || s[i+1] == '\r') {
					end(i + 1)
				}
			}
		case ';':
			if top.open == 0 {
				end(i + 1)
			}
		case '\n':
			if top.open == 0 && top.start >= 0 && !continues(s, top.start, i) {
				end(i + 1)
			}
		default:
			begin(i)
		}
		i++
	}
	for len(stack) > 1 {
		stack = stack[:len(stack)-1]
	}
	end(len(s))
	return out
}

// continues says whether the statement s[start:i] goes on past the newline at
// i: it ends in an operator or a comma, or the next line starts with one.
func continues(s string, start, i int) bool {
	prev := strings.TrimRight(s[start:i], " \t\r")
	next := strings.TrimLeft(s[i+1:], " \t\r\n")
	if prev == "" {
		return true
	}
	if strings.ContainsRune("+-*/%=&|^!~?:,.(<>[", rune(prev[len(prev)-1])) {
		return true
	}
	return next != "" && strings.ContainsRune(".?:+-*/%=&|^,)]", rune(next[0]))
}

// cssSpans are the units of a style sheet (or a style attribute): whole rules
// and comments, selectors of a selector list, declarations, and components of
// a declaration's value.
type cssSpans struct {
	rules, selectors, decls, values []span
}

// scanCSS finds the units of a style sheet, or with decls, of a declaration
// list (a style attribute). Nested rules (@media, @supports) are units too.
func scanCSS(s string, decls bool) cssSpans {
	var c cssSpans
	for i := 0; i < len(s); { // comments, once each
		j := skipQuoted(s, i, false)
		switch {
		case j == i:
			i++
			continue
		case s[i] == '/':
			c.rules = append(c.rules, span{i, j})
		}
		i = j
	}
	if decls {
		c.declarations(s, 0, len(s))
	} else {
		c.block(s, 0, len(s))
	}
	return c
}

// scanTo returns the index of the first of stop at paren depth 0 in s[i:hi]
// outside strings and comments, or hi.
func (c *cssSpans) scanTo(s string, i, hi int, stop string) int {
	depth := 0
	for i < hi {
		if j := skipQuoted(s, i, false); j > i {
			i = j
			continue
		}
		switch ch := s[i]; {
		case ch == '(' || ch == '[':
			depth++
		case ch == ')' || ch == ']':
			depth = max(depth-1, 0)
		case depth == 0 && strings.IndexByte(stop, ch) >= 0:
			return i
		}
		i++
	}
	return hi
}

// closeBrace returns the index of the '}' matching the '{' at open, or hi.
func closeBrace(s string, open, hi int) int {
	depth := 0
	for i := open; i < hi; {
		if j := skipQuoted(s, i, false); j > i {
			i = j
			continue
		}
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return hi
}

func (c *cssSpans) block(s string, lo, hi int) {
	for i := lo; i < hi; {
		ws := i // a rule goes with the space before it
		for i < hi && (isSpace(s[i]) || strings.HasPrefix(s[i:], "/*")) {
			if j := skipQuoted(s, i, false); j > i {
				i = j
			} else {
				i++
			}
		}
		if i >= hi {
			return
		}
		start := i
		j := c.scanTo(s, i, hi, "{;}")
		switch {
		case j < hi && s[j] == '{':
			end := closeBrace(s, j, hi)
			c.rules = append(c.rules, span{ws, min(end+1, hi)})
			prelude := strings.TrimSpace(s[start:j])
			switch {
			case strings.HasPrefix(prelude, "@media"), strings.HasPrefix(prelude, "@supports"),
				strings.HasPrefix(prelude, "@layer"), strings.HasPrefix(prelude, "@container"),
				strings.HasPrefix(prelude, "@document"):
				c.block(s, j+1, end)
			default:
				if !strings.HasPrefix(prelude, "@") {
					c.selectorList(s, start, j)
				}
				c.declarations(s, j+1, end)
			}
			i = end + 1
		case j < hi && s[j] == ';': // @import, @charset, or junk
			c.rules = append(c.rules, span{start, j + 1})
			i = j + 1
		default: // a stray '}' or the end
			if strings.TrimSpace(s[start:j]) != "" {
				c.rules = append(c.rules, span{start, j})
			}
			i = j + 1
		}
	}
}

// selectorList adds each selector of a comma list in s[lo:hi], with a comma.
func (c *cssSpans) selectorList(s string, lo, hi int) {
	var commas []int
	for i := lo; i < hi; {
		j := c.scanTo(s, i, hi, ",")
		if j >= hi {
			break
		}
		commas = append(commas, j)
		i = j + 1
	}
	if len(commas) == 0 {
		return
	}
	prev := lo
	for _, k := range commas { // each selector with the comma after it
		c.selectors = append(c.selectors, span{prev, k + 1})
		prev = k + 1
	}
	c.selectors = append(c.selectors, span{commas[len(commas)-1], hi}) // the last with the comma before it
}

// declarations adds each declaration of s[lo:hi] and its value's components.
func (c *cssSpans) declarations(s string, lo, hi int) {
	for i := lo; i < hi; {
		ws := i
		for i < hi && isSpace(s[i]) {
			i++
		}
		if i >= hi {
			return
		}
		j := c.scanTo(s, i, hi, ";{")
		if j < hi && s[j] == '{' { // a nested rule: skip it whole
			end := closeBrace(s, j, hi)
			c.rules = append(c.rules, span{i, min(end+1, hi)})
			i = end + 1
			continue
		}
		c.decls = append(c.decls, span{ws, min(j+1, hi)})
		if colon := c.scanTo(s, i, j, ":"); colon < j {
			c.components(s, colon+1, j)
		}
		i = j + 1
	}
}

// components adds the space- or comma-separated parts of a value (at paren
// depth 0), each with the separator before it, when there are two or more.
func (c *cssSpans) components(s string, lo, hi int) {
	var parts []span
	depth := 0
	start := lo
	for i := lo; i < hi; {
		if j := skipQuoted(s, i, false); j > i {
			i = j
			continue
		}
		switch ch := s[i]; {
		case ch == '(':
			depth++
		case ch == ')':
			depth = max(depth-1, 0)
		case depth == 0 && (isSpace(ch) || ch == ','):
			if strings.Trim(s[start:i], " \t\n\r\f,") != "" {
				parts = append(parts, span{start, i})
				start = i
			}
		}
		i++
	}
	if strings.Trim(s[start:hi], " \t\n\r\f,") != "" {
		parts = append(parts, span{start, hi})
	}
	if len(parts) >= 2 {
		c.values = append(c.values, parts...)
	}
}
