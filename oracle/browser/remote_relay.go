package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// A Playwright server's connection passes through a relay of the oracle's own on
// loopback (issue 26): playwright-go's dispatch goroutine asserts on the fields of
// every message from the server without a check or a recover (connection.go's
// Dispatch, the object constructors), so one malformed message would end the whole
// process. The relay checks each server message for what those assertions take, and
// on one that fails it closes that connection alone: the page then fails and
// reconnects like any dropped connection, and the log says why.

// relayMaxMessage bounds one server message: a case's answer (a dump, a trace) comes
// back in one, so it is the WebDriver route's Execute Script bound.
const relayMaxMessage = DefaultMaxReply

// startRelay listens on loopback for the one connection the driver opens, relays it
// to upstream (a ws:// or wss:// URL, query kept) and returns the URL to give
// BrowserType.Connect, and stop, which closes the listener when the driver never
// came (a connection already relayed goes on until either side closes it).
// maxMessage 0 is relayMaxMessage; dial bounds the server's handshake.
func startRelay(upstream string, maxMessage int64, dial time.Duration, log zerolog.Logger) (string, func(), error) {
	if maxMessage <= 0 {
		maxMessage = relayMaxMessage
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var once sync.Once
	stop := func() { once.Do(func() { l.Close() }) }
	srv := &http.Server{ReadHeaderTimeout: 30 * time.Second}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stop() // one connection per relay
		relayOne(w, r, upstream, maxMessage, dial, log)
	})
	go srv.Serve(l)
	return "ws://" + l.Addr().String() + "/", stop, nil
}

// relayHeaders are the driver's request headers the server reads (the browser's
// name, the launch options, any the user set), without those of the WebSocket
// handshake itself, which the dial makes anew.
func relayHeaders(in http.Header) http.Header {
	out := http.Header{}
	for k, v := range in {
		switch strings.ToLower(k) {
		case "connection", "upgrade", "host", "content-length",
			"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol":
			continue
		}
		out[k] = v
	}
	return out
}

func relayOne(w http.ResponseWriter, r *http.Request, upstream string, maxMessage int64, dial time.Duration, log zerolog.Logger) {
	log = log.With().Str("endpoint", upstream).Logger()
	dctx, dcancel := context.WithTimeout(r.Context(), dial)
	defer dcancel()
	up, resp, err := websocket.Dial(dctx, upstream, &websocket.DialOptions{HTTPHeader: relayHeaders(r.Header),
		CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		// The server's refusal (431: headers too large) reaches the driver's error.
		status := http.StatusBadGateway
		if resp != nil && resp.StatusCode >= 400 {
			status = resp.StatusCode
		}
		http.Error(w, err.Error(), status)
		return
	}
	up.SetReadLimit(maxMessage)
	down, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		up.CloseNow()
		return
	}
	down.SetReadLimit(-1) // the driver's messages are the oracle's own
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 2)
	go func() { // driver -> server, as is
		defer func() { done <- struct{}{} }()
		for {
			typ, data, err := down.Read(rctx)
			if err != nil || up.Write(rctx, typ, data) != nil {
				return
			}
		}
	}()
	go func() { // server -> driver, checked
		defer func() { done <- struct{}{} }()
		v := newRelayValidator()
		for {
			typ, data, err := up.Read(rctx)
			if err != nil {
				if websocket.CloseStatus(err) == websocket.StatusMessageTooBig || strings.Contains(err.Error(), "read limited") {
					log.Error().Err(err).Int64("limit", maxMessage).Msg("Playwright server sent a message over the bound; its connection is closed")
				}
				return
			}
			if err := v.check(data); err != nil {
				log.Error().Err(err).Str("message", fmt.Sprintf("%.300s", data)).
					Msg("Playwright server sent a malformed message; its connection is closed")
				return
			}
			if down.Write(rctx, typ, data) != nil {
				return
			}
		}
	}()
	<-done
	cancel()
	up.Close(websocket.StatusGoingAway, "")
	down.Close(websocket.StatusGoingAway, "")
}

// relayValidator checks server messages against what playwright-go asserts on,
// tracking the objects the server created (guid -> type) as the client does.
type relayValidator struct {
	objects  map[string]string // guid -> type; "" is the root
	parent   map[string]string
	children map[string]map[string]bool
}

func newRelayValidator() *relayValidator {
	return &relayValidator{objects: map[string]string{"": "Root"}, parent: map[string]string{},
		children: map[string]map[string]bool{}}
}

func (v *relayValidator) setParent(guid, parent string) {
	if old, ok := v.parent[guid]; ok {
		delete(v.children[old], guid)
	}
	v.parent[guid] = parent
	if v.children[parent] == nil {
		v.children[parent] = map[string]bool{}
	}
	v.children[parent][guid] = true
}

// relayTypes are the object types playwright-go's createObjectFactory knows; it
// panics on any other.
var relayTypes = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`Android AndroidSocket AndroidDevice APIRequestContext Artifact BindingCall
		Browser BrowserType BrowserContext Debugger CDPSession Dialog Electron ElectronApplication ElementHandle
		Frame JSHandle JsonPipe LocalUtils Page Playwright Request Response Route Selectors SocksSupport Stream
		Tracing WebSocket WebSocketRoute Worker WritableStream Disposable`) {
		relayTypes[t] = true
	}
}

// relayField is one initializer field a constructor asserts on: a string, or a
// reference to an object of type ref (any type when ref is ""), optional or not.
type relayField struct {
	name     string
	kind     string // "string" or "ref"
	ref      string
	optional bool
}

// relayInitializers are the initializer fields that playwright-go's constructors, or
// the oracle's calls on the connect path (Browser.Version, BrowserType.Name), assert on.
var relayInitializers = map[string][]relayField{
	"Playwright": {{name: "chromium", kind: "ref", ref: "BrowserType"}, {name: "firefox", kind: "ref", ref: "BrowserType"},
		{name: "webkit", kind: "ref", ref: "BrowserType"}, {name: "selectors", kind: "ref", optional: true},
		{name: "preLaunchedBrowser", kind: "ref", ref: "Browser", optional: true}},
	"Browser": {{name: "version", kind: "string"}},
	"BrowserContext": {{name: "tracing", kind: "ref", ref: "Tracing"}, {name: "requestContext", kind: "ref", ref: "APIRequestContext"},
		{name: "debugger", kind: "ref", ref: "Debugger", optional: true}},
	"Frame":    {{name: "name", kind: "string"}, {name: "url", kind: "string"}, {name: "parentFrame", kind: "ref", ref: "Frame", optional: true}},
	"Page":     {{name: "mainFrame", kind: "ref", ref: "Frame"}},
	"Request":  {{name: "redirectedFrom", kind: "ref", ref: "Request", optional: true}},
	"Response": {{name: "request", kind: "ref", ref: "Request"}},
	"Dialog":   {{name: "page", kind: "ref", ref: "Page", optional: true}},
	"JSHandle": {{name: "preview", kind: "string"}},
	"Route":    {{name: "request", kind: "ref", ref: "Request"}},
}

// relayMessage is the envelope as playwright-go's transport decodes it: a field of
// another JSON type fails its decode, which it turns into an error it ignores.
type relayMessage struct {
	ID     *string         `json:"id"`
	GUID   string          `json:"guid"`
	Method string          `json:"method"`
	Params map[string]any  `json:"params"`
	Result map[string]any  `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// check accepts one server message, or says why it would crash the client.
func (v *relayValidator) check(data []byte) error {
	var m relayMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("not a protocol message: %v", err)
	}
	if m.ID != nil {
		return nil // a reply: its envelope decoded, and Dispatch asserts nothing more on it
	}
	if _, ok := v.objects[m.GUID]; !ok {
		return nil // an unknown object: Dispatch drops it
	}
	switch m.Method {
	case "__create__":
		typ, ok1 := m.Params["type"].(string)
		guid, ok2 := m.Params["guid"].(string)
		init, ok3 := m.Params["initializer"].(map[string]any)
		switch {
		case !ok1 || !ok2:
			return errors.New("__create__ without a string type and guid")
		case !ok3:
			return fmt.Errorf("__create__ %s without an initializer object", typ)
		case !relayTypes[typ]:
			return fmt.Errorf("__create__ of an unknown type %q", typ)
		}
		for _, f := range relayInitializers[typ] {
			if err := v.checkField(init, f); err != nil {
				return fmt.Errorf("__create__ %s: initializer %s: %w", typ, f.name, err)
			}
		}
		v.objects[guid] = typ
		v.setParent(guid, m.GUID)
	case "__adopt__":
		guid, ok := m.Params["guid"].(string)
		if !ok {
			return errors.New("__adopt__ without a string guid")
		}
		if _, known := v.objects[guid]; known {
			v.setParent(guid, m.GUID)
		}
	case "__dispose__":
		if r, ok := m.Params["reason"]; ok {
			if _, isString := r.(string); !isString {
				return fmt.Errorf("__dispose__ with a reason that is not a string: %v", r)
			}
		}
		v.dispose(m.GUID)
	}
	return nil
}

func (v *relayValidator) checkField(init map[string]any, f relayField) error {
	val, present := init[f.name]
	if !present || val == nil {
		if f.optional {
			return nil
		}
		return errors.New("missing")
	}
	switch f.kind {
	case "string":
		if _, ok := val.(string); !ok {
			return errors.New("not a string")
		}
	case "ref":
		ref, _ := val.(map[string]any)
		guid, _ := ref["guid"].(string)
		typ, known := v.objects[guid]
		if !known || guid == "" {
			return errors.New("not a reference to a known object")
		}
		if f.ref != "" && typ != f.ref {
			return fmt.Errorf("refers to a %s, not a %s", typ, f.ref)
		}
	}
	return nil
}

// dispose forgets guid and its descendants.
func (v *relayValidator) dispose(guid string) {
	if guid == "" {
		return
	}
	if p, ok := v.parent[guid]; ok {
		delete(v.children[p], guid)
	}
	var forget func(g string)
	forget = func(g string) {
		for c := range v.children[g] {
			forget(c)
		}
		delete(v.children, g)
		delete(v.objects, g)
		delete(v.parent, g)
	}
	forget(guid)
}
