package playwright

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

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// A Playwright server's connection passes through a relay of the oracle's own on
// loopback: playwright-go's dispatch goroutine asserts on the fields of
// every message from the server without a check or a recover (connection.go's
// Dispatch, the object constructors), so one malformed message would end the whole
// process. The relay checks each server message for what those assertions take, and
// on one that fails it closes that connection alone: the page then fails and
// reconnects like any dropped connection, and the log says why.

// relayMaxMessage bounds one server message: a case's answer (a dump, a trace) comes
// back in one, so it is the WebDriver route's Execute Script bound.
const relayMaxMessage = browser.DefaultMaxReply

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
	v := newRelayValidator()
	go func() { // driver -> server, as is; its calls are noted for their replies' check
		defer func() { done <- struct{}{} }()
		for {
			typ, data, err := down.Read(rctx)
			if err != nil {
				return
			}
			v.sent(data)
			if up.Write(rctx, typ, data) != nil {
				return
			}
		}
	}()
	go func() { // server -> driver, checked
		defer func() { done <- struct{}{} }()
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

// relayValidator checks server messages against what playwright-go asserts on
// (playwright/schema.go), tracking the objects the server created (guid -> type) as the
// client does, and the calls the driver made (id -> Type.method), whose replies it
// checks.
type relayValidator struct {
	objects  map[string]string // guid -> type; "" is the root
	parent   map[string]string
	children map[string]map[string]bool
	finished map[string]bool // responses a requestFinished named: its handler closes a channel

	callsMu sync.Mutex
	calls   map[string][2]string // call id -> the guid and method called, from the driver's messages
}

func newRelayValidator() *relayValidator {
	return &relayValidator{objects: map[string]string{"": "Root"}, parent: map[string]string{},
		children: map[string]map[string]bool{}, finished: map[string]bool{}, calls: map[string][2]string{}}
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

// relayMessage is the envelope as playwright-go's transport decodes it: a field of
// another JSON type fails its decode, which it turns into an error it ignores.
type relayMessage struct {
	ID     *string        `json:"id"`
	GUID   string         `json:"guid"`
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
	Result map[string]any `json:"result"`
	Error  *struct {
		Error struct {
			Name    string `json:"name"`
			Message string `json:"message"`
			Stack   string `json:"stack"`
		} `json:"error"`
	} `json:"error"`
	Log          []string       `json:"log"`
	ErrorDetails map[string]any `json:"errorDetails"`
}

// sent records a call of the driver's, whose reply check then knows.
func (v *relayValidator) sent(data []byte) {
	var m struct {
		ID     *string `json:"id"`
		GUID   string  `json:"guid"`
		Method string  `json:"method"`
	}
	if json.Unmarshal(data, &m) != nil || m.ID == nil {
		return
	}
	v.callsMu.Lock()
	v.calls[*m.ID] = [2]string{m.GUID, m.Method}
	v.callsMu.Unlock()
}

// isRef says whether obj is itself a reference to a live object: playwright-go then
// puts the object where its code asserts a map (Dispatch, createRemoteObject).
func (v *relayValidator) isRef(obj map[string]any) bool {
	g, ok := obj["guid"].(string)
	_, known := v.objects[g]
	return ok && known
}

// check accepts one server message, or says why it would crash the client.
func (v *relayValidator) check(data []byte) error {
	var m relayMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("not a protocol message: %v", err)
	}
	if m.ID != nil {
		return v.checkReply(*m.ID, m)
	}
	objType, known := v.objects[m.GUID]
	switch {
	case m.Method == "__create__":
		// Dispatch creates the object even under a parent it does not know (with no
		// connection: a nil dereference in some constructors).
		if !known {
			return fmt.Errorf("__create__ under an unknown object %q", m.GUID)
		}
		return v.checkCreate(m, objType)
	case !known:
		return nil // Dispatch drops it
	case m.Method == "__adopt__":
		guid, ok := m.Params["guid"].(string)
		if !ok {
			return errors.New("__adopt__ without a string guid")
		}
		if _, child := v.objects[guid]; !child {
			return nil
		}
		if guid == "" {
			return errors.New("__adopt__ of the root")
		}
		for a := m.GUID; ; a = v.parent[a] {
			if a == guid {
				return errors.New("__adopt__ of an object into itself or its descendant")
			}
			if a == "" {
				break
			}
		}
		v.setParent(guid, m.GUID)
	case m.Method == "__dispose__":
		if r, ok := m.Params["reason"]; ok {
			if _, isString := r.(string); !isString {
				return fmt.Errorf("__dispose__ with a reason that is not a string: %v", r)
			}
		}
		if m.GUID == "" {
			return errors.New("__dispose__ of the root")
		}
		v.dispose(m.GUID)
	default:
		key := objType + "." + m.Method
		if v.isRef(m.Params) { // an event's params go through replaceGuidsWithChannels, the others' do not
			return fmt.Errorf("event %s: params that are a reference to an object", key)
		}
		if err := v.checkSpec(m.Params, relayEvents[key]); err != nil {
			return fmt.Errorf("event %s: %w", key, err)
		}
		if key == "BrowserContext.requestFinished" {
			if r, ok := m.Params["response"].(map[string]any); ok {
				g, _ := r["guid"].(string)
				if v.finished[g] {
					return fmt.Errorf("event %s: a second one for response %s", key, g)
				}
				v.finished[g] = true
			}
		}
	}
	return nil
}

func (v *relayValidator) checkCreate(m relayMessage, parentType string) error {
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
	case relayRefusedTypes[typ]:
		return fmt.Errorf("__create__ of a %s, which the oracle never asks for", typ)
	case relayParents[typ] != "" && parentType != relayParents[typ]:
		return fmt.Errorf("__create__ %s under a %s, not a %s", typ, parentType, relayParents[typ])
	case v.isRef(init):
		return fmt.Errorf("__create__ %s with an initializer that is a reference to an object", typ)
	}
	if err := v.checkSpec(init, relayInitializers[typ]); err != nil {
		return fmt.Errorf("__create__ %s: initializer %w", typ, err)
	}
	if typ == "LocalUtils" {
		for _, d := range init["deviceDescriptors"].([]any) {
			if e, ok := d.(map[string]any); !ok || e["name"] == nil {
				return errors.New("__create__ LocalUtils: a device descriptor without a name")
			} else if _, ok := e["name"].(string); !ok {
				return errors.New("__create__ LocalUtils: a device descriptor whose name is not a string")
			}
		}
	}
	v.objects[guid] = typ
	v.setParent(guid, m.GUID)
	return nil
}

// checkReply checks the result of a call the driver made.
func (v *relayValidator) checkReply(id string, m relayMessage) error {
	v.callsMu.Lock()
	c, ok := v.calls[id]
	delete(v.calls, id)
	v.callsMu.Unlock()
	if !ok || (m.Error != nil && m.Result == nil) {
		return nil // no call waits for it, or an error (its shape decoded above)
	}
	call := v.objects[c[0]] + "." + c[1]
	if v.isRef(m.Result) {
		return fmt.Errorf("reply to %s: a result that is a reference to an object", call)
	}
	if relayOneField[call] && len(m.Result) > 1 {
		return fmt.Errorf("reply to %s: a result of %d fields, not one", call, len(m.Result))
	}
	if err := v.checkSpec(m.Result, relayResults[call]); err != nil {
		return fmt.Errorf("reply to %s: result %w", call, err)
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
		delete(v.finished, g)
	}
	forget(guid)
}
