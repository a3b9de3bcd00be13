package host

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// Firefox's WebDriver BiDi server leaves Nagle's algorithm on for the connection it
// accepts from the Playwright driver, and the driver's end delays its ACKs (Linux's
// delayed ACK, about 40 ms, in the interactive mode a request/answer exchange puts
// it in). An event Firefox sends just before an answer (browsingContext.historyUpdated
// on document.open, domContentLoaded and load on every navigation) is then still
// unacknowledged when the answer is written, and the kernel holds the answer until
// the ACK comes: about 40 ms added to every call whose answer follows an event
// (measured with strace on both ends: the answer's sendto in Firefox and its read in
// node 35-45 ms apart, event-to-answer plus that wait always about 40 ms). The
// answer itself, and what the page measured, are the same; only its delivery waits.
//
// noDelayAccepted turns Nagle off on those accepted connections from outside the
// browser: it takes a duplicate of each socket from the browser process
// (pidfd_getfd, which needs the rights to ptrace it: the oracle's own user, or root
// over the browser user) and sets TCP_NODELAY, which is a property of the socket,
// not of the descriptor. It returns how many connections it changed.
func noDelayAccepted(pid int) (int, error) {
	return eachAccepted(pid, func(fd int) error {
		return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	})
}

// eachAccepted calls f with a duplicate of every TCP connection pid accepted on one
// of its listening sockets, and returns how many calls succeeded.
func eachAccepted(pid int, f func(fd int) error) (int, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return 0, err
	}
	var listening = map[string]bool{}
	type conn struct {
		port  string
		inode uint64
	}
	var established []conn
	for _, table := range []string{"tcp", "tcp6"} {
		rows, err := tcpTable(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue // no IPv6 in this namespace
		}
		for _, r := range rows {
			if _, ours := inodes[r.inode]; !ours {
				continue
			}
			switch r.state {
			case "0A": // LISTEN
				listening[r.localPort] = true
			case "01": // ESTABLISHED
				established = append(established, conn{r.localPort, r.inode})
			}
		}
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	n := 0
	var firstErr error
	for _, c := range established {
		if !listening[c.port] {
			continue // a connection the browser opened itself (Gecko sets TCP_NODELAY there)
		}
		fd, err := unix.PidfdGetfd(pidfd, inodes[c.inode], 0)
		if err == nil {
			err = f(fd)
			unix.Close(fd)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("the browser's socket: %w", err)
			}
			continue
		}
		n++
	}
	return n, firstErr
}

// socketInodes maps the socket inodes pid holds open to its descriptor numbers.
func socketInodes(pid int) (map[uint64]int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[uint64]int{}
	for _, ent := range ents {
		link, err := os.Readlink(dir + "/" + ent.Name())
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		inode, err1 := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]"), 10, 64)
		fd, err2 := strconv.Atoi(ent.Name())
		if err1 == nil && err2 == nil {
			out[inode] = fd
		}
	}
	return out, nil
}

type tcpRow struct {
	localPort, state string
	inode            uint64
}

// tcpTable reads /proc/<pid>/net/tcp{,6}: "sl local_address rem_address st ... inode".
func tcpTable(path string) ([]tcpRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []tcpRow
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		_, port, ok := strings.Cut(fields[1], ":")
		inode, err := strconv.ParseUint(fields[9], 10, 64)
		if !ok || err != nil {
			continue
		}
		rows = append(rows, tcpRow{localPort: port, state: fields[3], inode: inode})
	}
	return rows, sc.Err()
}

// NoDelayFirefox applies noDelayAccepted to a freshly launched Firefox's main
// processes (engine names it in the log; Chromium's driver speaks over a pipe). A
// failure costs only speed, so it is logged, never fatal.
func NoDelayFirefox(engine string, pids []int, log zerolog.Logger) {
	total := 0
	for _, pid := range pids {
		n, err := noDelayAccepted(pid)
		total += n
		if err != nil {
			log.Info().Str("engine", engine).Int("pid", pid).Err(err).Msg("could not turn Nagle off on the WebDriver BiDi connection; calls after an event wait for a delayed ACK (about 40 ms)")
		}
	}
	log.Debug().Str("engine", engine).Int("connections", total).Msg("TCP_NODELAY set on the WebDriver BiDi connection")
}
