package playwright

import (
	"errors"
	"fmt"
	"strings"
)

// The shapes playwright-go v0.6401.0 asserts on without a check, on its dispatch
// goroutine (connection.go's Dispatch, the constructors and the channel's event
// handlers) or on the goroutine of the call whose reply it is (the oracle's own,
// without a recover): the relay refuses any server message that does not have them
// (docs/untrusted.md). A spec is space-separated name:kind, where a
// kind is s (string), n (number), b (bool), m (object), a (array), val (a serialized
// JS value, parseValue), @Type (a reference to a live object of that type; @ any
// type); a trailing ? lets the field be absent or null. A dotted name is checked
// only when its parent is an object.

// relayInitializers are the initializers' specs, by object type; relayParents the
// type an object's parent must have where a constructor asserts it.
var relayInitializers = compileSpecs(map[string]string{
	"Playwright":     "chromium:@BrowserType firefox:@BrowserType webkit:@BrowserType selectors:@Selectors? preLaunchedBrowser:@Browser?",
	"BrowserType":    "name:s",
	"Browser":        "version:s",
	"BrowserContext": "tracing:@Tracing requestContext:@APIRequestContext debugger:@?",
	"Page":           "mainFrame:@Frame viewportSize:m? viewportSize.width:n viewportSize.height:n video:@Artifact?",
	"Frame":          "name:s url:s parentFrame:@Frame?",
	"Request":        "url:s method:s resourceType:s isNavigationRequest:b postData:s? redirectedFrom:@Request?",
	"Response":       "request:@Request url:s status:n statusText:s fromServiceWorker:b",
	"Route":          "request:@Request",
	"Dialog":         "page:@Page? type:s message:s defaultValue:s",
	"JSHandle":       "preview:s",
	"ElementHandle":  "preview:s?",
	"WebSocket":      "url:s",
	"Worker":         "url:s",
	"Artifact":       "absolutePath:s",
	"LocalUtils":     "deviceDescriptors:a",
})

var relayParents = map[string]string{"Page": "BrowserContext", "WebSocket": "Page"}

// relayRefusedTypes are types whose handlers assert on what the oracle never asks a
// server for (WebSocket routes, CDP sessions, exposed bindings, pipes of the local
// driver): a server creating one is not serving this client.
var relayRefusedTypes = map[string]bool{"WebSocketRoute": true, "CDPSession": true, "BindingCall": true, "JsonPipe": true}

// relayEvents are the events' params specs, by Type.event, for the events whose
// handlers assert; an event without a spec has a handler that asserts nothing, or
// none.
var relayEvents = compileSpecs(map[string]string{
	"Browser.context":                "context:@BrowserContext",
	"BrowserContext.bindingCall":     "binding:@BindingCall",
	"BrowserContext.page":            "page:@Page",
	"BrowserContext.backgroundPage":  "page:@Page",
	"BrowserContext.route":           "route:@Route",
	"BrowserContext.webSocketRoute":  "webSocketRoute:@WebSocketRoute",
	"BrowserContext.serviceWorker":   "worker:@Worker",
	"BrowserContext.console":         "page:@Page? worker:@Worker?",
	"BrowserContext.dialog":          "dialog:@Dialog",
	"BrowserContext.dialogClosed":    "dialog:@Dialog",
	"BrowserContext.pageError":       "error:m error.error:m error.error.name:s? error.error.message:s? error.error.stack:s? page:@Page? location:m? location.url:s? location.line:n? location.column:n?",
	"BrowserContext.request":         "request:@Request page:@Page?",
	"BrowserContext.requestFailed":   "request:@Request failureText:s? page:@Page? responseEndTiming:n",
	"BrowserContext.requestFinished": "request:@Request response:@Response? page:@Page? responseEndTiming:n",
	"BrowserContext.response":        "response:@Response page:@Page?",
	"Page.bindingCall":               "binding:@BindingCall",
	"Page.fileChooser":               "element:@ElementHandle isMultiple:b",
	"Page.frameAttached":             "frame:@Frame",
	"Page.frameDetached":             "frame:@Frame",
	"Page.viewportSizeChanged":       "viewportSize:m? viewportSize.width:n viewportSize.height:n",
	"Page.locatorHandlerTriggered":   "uid:n",
	"Page.popup":                     "page:@Page",
	"Page.route":                     "route:@Route",
	"Page.download":                  "url:s suggestedFilename:s artifact:@Artifact",
	"Page.webSocket":                 "webSocket:@WebSocket",
	"Page.webSocketRoute":            "webSocketRoute:@WebSocketRoute",
	"Page.worker":                    "worker:@Worker",
	"Frame.navigated":                "url:s name:s",
	"Frame.loadstate":                "add:s? remove:s?",
	"JSHandle.previewUpdated":        "preview:s",
	"ElementHandle.previewUpdated":   "preview:s",
	"Worker.console":                 "page:@Page? worker:@Worker?",
	"WebSocket.frameSent":            "opcode:n data:s",
	"WebSocket.frameReceived":        "opcode:n data:s",
	"Debugger.pausedStateChanged":    "pausedDetails:m? pausedDetails.title:s pausedDetails.location:m? pausedDetails.location.file:s pausedDetails.location.line:n? pausedDetails.location.column:n?",
})

// relayResults are the replies' result specs, by Type.method of the call, for the
// calls the oracle makes whose results are asserted on. A call made with Send takes
// the result's only field (GetResultValue: with more fields it gets the whole
// object): relayOneField lists those.
var relayResults = compileSpecs(map[string]string{
	"Root.initialize":              "playwright:@Playwright",
	"Browser.newContext":           "context:@BrowserContext",
	"BrowserContext.newPage":       "page:@Page",
	"Frame.goto":                   "response:@Response?",
	"Frame.evaluateExpression":     "value:val",
	"Page.screenshot":              "binary:s",
	"BrowserContext.addInitScript": "",
})

var relayOneField = map[string]bool{"Browser.newContext": true, "BrowserContext.newPage": true,
	"Frame.goto": true, "Frame.evaluateExpression": true, "Page.screenshot": true}

type relaySpecField struct {
	path     []string
	kind     string
	optional bool
}

func compileSpecs(in map[string]string) map[string][]relaySpecField {
	out := map[string][]relaySpecField{}
	for k, spec := range in {
		fields := []relaySpecField{}
		for _, f := range strings.Fields(spec) {
			name, kind, ok := strings.Cut(f, ":")
			if !ok {
				panic("relay spec " + k + ": " + f)
			}
			opt := strings.HasSuffix(kind, "?")
			fields = append(fields, relaySpecField{path: strings.Split(name, "."), kind: strings.TrimSuffix(kind, "?"), optional: opt})
		}
		out[k] = fields
	}
	return out
}

// checkSpec checks obj against spec.
func (v *relayValidator) checkSpec(obj map[string]any, spec []relaySpecField) error {
	for _, f := range spec {
		parent, ok := obj, true
		for _, p := range f.path[:len(f.path)-1] {
			if parent, ok = parent[p].(map[string]any); !ok {
				break
			}
		}
		if !ok {
			continue // the parent's own field says whether it may be missing
		}
		name := strings.Join(f.path, ".")
		val, present := parent[f.path[len(f.path)-1]]
		if !present || val == nil {
			if f.optional {
				continue
			}
			return fmt.Errorf("%s: missing", name)
		}
		if err := v.checkKind(val, f.kind); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (v *relayValidator) checkKind(val any, kind string) error {
	ok := true
	switch kind {
	case "s":
		_, ok = val.(string)
	case "n":
		_, ok = val.(float64)
	case "b":
		_, ok = val.(bool)
	case "m":
		_, ok = val.(map[string]any)
	case "a":
		_, ok = val.([]any)
	case "val":
		return checkSerialized(val, 0)
	default: // @Type
		ref, _ := val.(map[string]any)
		guid, isString := ref["guid"].(string)
		typ, known := v.objects[guid]
		if !isString || !known || guid == "" {
			return errors.New("not a reference to a live object")
		}
		if want := strings.TrimPrefix(kind, "@"); want != "" && typ != want {
			return fmt.Errorf("refers to a %s, not a %s", typ, want)
		}
	}
	if !ok {
		return fmt.Errorf("not of kind %s: %.80v", kind, val)
	}
	return nil
}

// checkSerialized accepts the serialized values the oracle's expressions return
// (numbers, strings, booleans, the special values, arrays and objects of them),
// each in the one form playwright-go's parseValue decodes without a panic.
func checkSerialized(val any, depth int) error {
	if depth > 64 {
		return errors.New("a serialized value nested too deep")
	}
	m, ok := val.(map[string]any)
	if !ok {
		return nil // parseValue returns anything but an object as is
	}
	bad := func(k string) error { return fmt.Errorf("a serialized value with a malformed %q: %.80v", k, val) }
	for k := range m {
		if !strings.Contains(" n s b v a o id ", " "+k+" ") {
			return fmt.Errorf("a serialized value of a form the oracle never asks for: %.80v", val)
		}
	}
	for _, k := range []string{"n", "s", "b", "v", "a", "o"} {
		x, has := m[k]
		if !has {
			continue
		}
		switch k {
		case "n":
			if _, ok := x.(float64); !ok {
				return bad(k)
			}
		case "s", "v":
			if _, ok := x.(string); !ok {
				return bad(k)
			}
		case "b":
			if _, ok := x.(bool); !ok {
				return bad(k)
			}
		case "a", "o":
			items, ok := x.([]any)
			if _, idOK := m["id"].(float64); !ok || !idOK {
				return bad(k)
			}
			for _, it := range items {
				if k == "o" {
					e, ok := it.(map[string]any)
					if _, keyOK := e["k"].(string); !ok || !keyOK {
						return bad(k)
					}
					it = e["v"]
				}
				if err := checkSerialized(it, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("a serialized value of a form the oracle never asks for: %.80v", val)
}
