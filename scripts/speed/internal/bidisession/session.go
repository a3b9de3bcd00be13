// Package bidisession is the minimal WebDriver BiDi client of the speed probes
// (scripts/speed/bidinewtab, scripts/speed/bidicase): a Firefox of its own profile,
// one session, commands by id, events ignored, and any failure fatal. The oracle's
// own client is oracle/browser/bidi/wire.go.
package bidisession

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/coder/websocket"
	"github.com/layout-oracle/oracle/scripts/speed/internal/probecase"
)

// Firefox is one headless Firefox and its BiDi session.
type Firefox struct {
	Cmd     *exec.Cmd
	Version string // session.new's browserVersion
	profile string
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int
	waiting map[int]chan json.RawMessage
}

// Start launches firefox headless on a new profile whose user.js is userJS, and opens
// a session.
func Start(firefox, userJS string) *Firefox {
	profile, err := os.MkdirTemp("", "bidisession")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(userJS), 0o644); err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(firefox, "--headless", "--remote-debugging-port=0", "--profile", profile, "--no-remote", "about:blank")
	url := probecase.StartListening(cmd, regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`))
	ws, _, err := websocket.Dial(context.Background(), url+"/session", nil)
	if err != nil {
		log.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	f := &Firefox{Cmd: cmd, profile: profile, ws: ws, waiting: map[int]chan json.RawMessage{}}
	go f.read()
	var v struct {
		Capabilities struct{ BrowserVersion string }
	}
	_ = json.Unmarshal(f.Call("session.new", map[string]any{"capabilities": map[string]any{}}), &v)
	f.Version = v.Capabilities.BrowserVersion
	return f
}

// Close kills the browser and removes its profile.
func (f *Firefox) Close() {
	_ = f.Cmd.Process.Kill()
	_ = f.Cmd.Wait()
	os.RemoveAll(f.profile)
}

// Call sends one command and returns its result; an error reply is fatal.
func (f *Firefox) Call(method string, params any) json.RawMessage {
	f.mu.Lock()
	f.next++
	id, ch := f.next, make(chan json.RawMessage, 1)
	f.waiting[id] = ch
	f.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := f.ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
		log.Fatalf("%s: %v", method, err)
	}
	var reply struct {
		Type    string          `json:"type"`
		Result  json.RawMessage `json:"result"`
		Message string          `json:"message"`
	}
	_ = json.Unmarshal(<-ch, &reply)
	if reply.Type != "success" {
		log.Fatalf("%s: %s", method, reply.Message)
	}
	return reply.Result
}

func (f *Firefox) read() {
	for {
		_, b, err := f.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m struct{ ID *int }
		if json.Unmarshal(b, &m) == nil && m.ID != nil {
			f.mu.Lock()
			ch := f.waiting[*m.ID]
			f.mu.Unlock()
			ch <- b
		}
	}
}
