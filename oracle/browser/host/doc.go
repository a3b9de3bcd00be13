// Package host is what the oracle's browsers need of the machine they run on, whatever
// the route: the unprivileged browser user every browser process runs as and the
// wrapper that starts a browser as that user (user.go), the process tree read from
// /proc (proc.go), each engine's memory cgroup (memlimit.go), the X display the oracle
// owns (xvfb.go) and the closing of dialogs a case opens on it (xdialogs.go), and the
// small process helpers every route shares (env.go, taillog.go).
//
// It knows nothing of engines or routes: package browser and its routes import it,
// never the other way round. The sandbox check, which needs each engine's knowledge
// of its content processes, stays in package browser (sandbox.go).
package host
