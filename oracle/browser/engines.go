package browser

import "github.com/layout-oracle/oracle/oracle/browser/host"

// engineKnowledge is what every route knows of one engine beyond its protocol name:
// which of its processes run web content, and what its sandbox looks like. Each
// engine's value is in a file of its own (engine_chromium.go, engine_firefox.go,
// engine_webkit.go); what a route knows of an engine besides is its own (the
// Playwright route's: playwright/knowledge.go).
type engineKnowledge struct {
	// contentProcess says whether p runs web content: the processes the engine's
	// sandbox exists for.
	contentProcess func(p host.ProcInfo) bool
	// sandbox names the sandbox the content process c is in, and why it does not
	// count when it does not ("" when it does); main is the browser's main process.
	sandbox func(c, main host.ProcInfo) (kind, why string)
}

var engineKnowledgeOf = map[string]*engineKnowledge{Chromium: &chromiumKnowledge, Firefox: &firefoxKnowledge, WebKit: &webkitKnowledge}

// knowledgeOf is engine's knowledge; an unknown engine's is empty.
func knowledgeOf(engine string) *engineKnowledge {
	if k, ok := engineKnowledgeOf[engine]; ok {
		return k
	}
	return &engineKnowledge{}
}
