// Package oracle is the layout oracle's service: it parses the NDJSON protocol
// (protocol.go), serves requests from stdin to stdout (server.go), fans a request out
// to each engine's pool of pages (fanout.go), starts the engines and runs the
// self-check before they serve (launch.go, selfcheck.go), and answers each kind of
// request in its registry (operation.go) on a page: geometry (geometry.go), trace
// (trace.go) and reflect (reflect.go), from the store when it holds the answer
// (stored.go). A case whose document is navigated to (a "url" under --docroot, an
// inline XML document) is webcontent.go.
//
// The browsers themselves, and how each is reached, are package oracle/browser; an
// engine's pages are package oracle/pool; the case origin, its network allowlist and
// --docroot are package oracle/origin; remote endpoints are package oracle/remote;
// the build fingerprint of the warm start (warmstart.go) is package
// oracle/buildprint.
package oracle
