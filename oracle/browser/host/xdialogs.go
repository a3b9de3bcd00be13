package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// WebKitGTK's MiniBrowser answers document.execCommand('print') with GTK's print
// dialog, modal, and the web process waits for it: the case then held its page until
// the deadline, and the driver and browser were restarted. Chromium and Firefox print
// nothing headless (Firefox's print.enabled is off). So while a WebDriver call waits
// on the oracle's own X display, every dialog there is closed as a user would close
// it (WM_DELETE_WINDOW, the window manager's close button): GTK answers that as
// Cancel, and the case goes on. No window manager runs on the display, so nothing
// else speaks for a dialog's close button.

// dialogGrace is how long a call waits before its display is searched for dialogs;
// then every dialogPoll. A case that opens none never pays an X round trip.
const (
	dialogGrace = 300 * time.Millisecond
	dialogPoll  = 250 * time.Millisecond
)

// WatchDialogs closes the dialogs on x's display from dialogGrace after it is called
// until the returned stop is: around one WebDriver call.
func (x *Xvfb) WatchDialogs(log zerolog.Logger) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(dialogGrace)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			n, err := x.closeDialogs()
			if err != nil {
				log.Debug().Err(err).Msg("looking for dialogs on the display")
			} else if n > 0 {
				log.Info().Int("dialogs", n).Msg("closed a dialog the case opened (print)")
			}
			t.Reset(dialogPoll)
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// closeDialogs asks every dialog on the display to close and says how many it
// asked. A dialog is a viewable top-level window transient for another window
// (WM_TRANSIENT_FOR, which GTK sets on every dialog it parents): the browser's own
// windows are not.
func (x *Xvfb) closeDialogs() (int, error) {
	c, err := dialX(x.Display, x.cookie)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	tops, err := c.children(c.root)
	if err != nil {
		return 0, err
	}
	var dialogs []uint32
	for _, w := range tops {
		viewable, err := c.viewable(w)
		if err != nil {
			continue // gone meanwhile
		}
		if !viewable {
			continue
		}
		if transient, err := c.hasProperty(w, atomWMTransientFor); err == nil && transient {
			dialogs = append(dialogs, w)
		}
	}
	if len(dialogs) == 0 {
		return 0, nil
	}
	protocols, err := c.internAtom("WM_PROTOCOLS")
	if err != nil {
		return 0, err
	}
	deleteWindow, err := c.internAtom("WM_DELETE_WINDOW")
	if err != nil {
		return 0, err
	}
	for _, w := range dialogs {
		if err := c.sendDelete(w, protocols, deleteWindow); err != nil {
			return 0, err
		}
	}
	return len(dialogs), c.sync()
}

// atomWMTransientFor is a predefined atom of the core protocol (Xatom.h).
const atomWMTransientFor = 68

// xConn is the few requests of the X11 core protocol CloseDialogs needs, spoken
// directly over the display's Unix socket, little-endian.
type xConn struct {
	net.Conn
	root uint32
}

// dialX connects to display (":N", the server's Unix socket) with its
// MIT-MAGIC-COOKIE-1 and reads the first screen's root window.
func dialX(display string, cookie []byte) (*xConn, error) {
	n, ok := strings.CutPrefix(display, ":")
	if !ok || n == "" || strings.ContainsAny(n, ":./") {
		return nil, fmt.Errorf("x11: display %q is not a local :N", display)
	}
	conn, err := net.DialTimeout("unix", "/tmp/.X11-unix/X"+n, 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("x11: %w", err)
	}
	c := &xConn{Conn: conn}
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	const auth = "MIT-MAGIC-COOKIE-1"
	req := []byte{'l', 0}
	req = binary.LittleEndian.AppendUint16(req, 11) // protocol 11.0
	req = binary.LittleEndian.AppendUint16(req, 0)
	req = binary.LittleEndian.AppendUint16(req, uint16(len(auth)))
	req = binary.LittleEndian.AppendUint16(req, uint16(len(cookie)))
	req = append(req, 0, 0)
	req = append(padded(req, []byte(auth)), cookie...)
	req = append(req, make([]byte, pad4(len(cookie)))...)
	if _, err := c.Write(req); err != nil {
		c.Close()
		return nil, fmt.Errorf("x11 setup: %w", err)
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(c, head); err != nil {
		c.Close()
		return nil, fmt.Errorf("x11 setup: %w", err)
	}
	body := make([]byte, 4*int(binary.LittleEndian.Uint16(head[6:])))
	if _, err := io.ReadFull(c, body); err != nil {
		c.Close()
		return nil, fmt.Errorf("x11 setup: %w", err)
	}
	if head[0] != 1 {
		c.Close()
		reason := body[:min(int(head[1]), len(body))]
		return nil, fmt.Errorf("x11 setup refused: %q", reason)
	}
	// The setup's fixed part is 32 bytes, then the vendor (padded) and the pixmap
	// formats (8 bytes each); the first screen starts with its root window.
	if len(body) < 32 {
		c.Close()
		return nil, errors.New("x11 setup: short reply")
	}
	vendor := int(binary.LittleEndian.Uint16(body[16:]))
	screen := 32 + vendor + pad4(vendor) + 8*int(body[21])
	if body[20] == 0 || len(body) < screen+4 {
		c.Close()
		return nil, errors.New("x11 setup: no screen")
	}
	c.root = binary.LittleEndian.Uint32(body[screen:])
	return c, nil
}

func pad4(n int) int { return (4 - n%4) % 4 }

// padded appends b and its padding to a 4-byte boundary.
func padded(req, b []byte) []byte { return append(append(req, b...), make([]byte, pad4(len(b)))...) }

// request sends one request: opcode, its one-byte field, and body (a multiple of 4).
func (c *xConn) request(opcode, field byte, body []byte) error {
	req := []byte{opcode, field}
	req = binary.LittleEndian.AppendUint16(req, uint16(1+len(body)/4))
	_, err := c.Write(append(req, body...))
	return err
}

// reply reads the next reply (its 32 bytes and what follows), skipping events; an
// error from the server is returned as one.
func (c *xConn) reply() ([]byte, error) {
	for {
		b := make([]byte, 32)
		if _, err := io.ReadFull(c, b); err != nil {
			return nil, err
		}
		switch b[0] {
		case 0:
			return nil, fmt.Errorf("x11 error %d (opcode %d)", b[1], b[10])
		case 1:
			extra := make([]byte, 4*int(binary.LittleEndian.Uint32(b[4:])))
			if _, err := io.ReadFull(c, extra); err != nil {
				return nil, err
			}
			return append(b, extra...), nil
		}
	}
}

func (c *xConn) call(opcode, field byte, body []byte) ([]byte, error) {
	if err := c.request(opcode, field, body); err != nil {
		return nil, err
	}
	return c.reply()
}

func u32(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

// children is QueryTree's list of w's children.
func (c *xConn) children(w uint32) ([]uint32, error) {
	r, err := c.call(15, 0, u32(w))
	if err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint16(r[16:]))
	if len(r) < 32+4*n {
		return nil, errors.New("x11: short QueryTree reply")
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(r[32+4*i:])
	}
	return out, nil
}

// viewable is GetWindowAttributes' map state: IsViewable.
func (c *xConn) viewable(w uint32) (bool, error) {
	r, err := c.call(3, 0, u32(w))
	if err != nil {
		return false, err
	}
	return r[26] == 2, nil
}

// hasProperty says whether w has property (GetProperty of any type, no data).
func (c *xConn) hasProperty(w, property uint32) (bool, error) {
	r, err := c.call(20, 0, u32(w, property, 0, 0, 0))
	if err != nil {
		return false, err
	}
	return binary.LittleEndian.Uint32(r[8:]) != 0, nil
}

func (c *xConn) internAtom(name string) (uint32, error) {
	body := binary.LittleEndian.AppendUint16(nil, uint16(len(name)))
	body = padded(append(body, 0, 0), []byte(name))
	r, err := c.call(16, 0, body)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(r[8:]), nil
}

// sendDelete sends w's client the ICCCM WM_DELETE_WINDOW message a window manager
// sends for its close button.
func (c *xConn) sendDelete(w, protocols, deleteWindow uint32) error {
	event := []byte{33, 32, 0, 0} // ClientMessage, format 32
	event = append(event, u32(w, protocols, deleteWindow, 0, 0, 0, 0)...)
	return c.request(25, 0, append(u32(w, 0), event...)) // SendEvent to w's client
}

// sync waits for the server to have handled every request sent (GetInputFocus).
func (c *xConn) sync() error {
	_, err := c.call(43, 0, nil)
	return err
}
