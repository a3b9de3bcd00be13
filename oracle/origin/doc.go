// Package origin is the oracle's one local HTTP server (Server), and so every
// browser's proxy: each case gets an origin of its own, c<token>.localhost:<port>
// (NewHost), where it is served its trace page (origin.go), its docroot document or
// inline XML document (documents.go), and --docroot's files read-only (docroot.go,
// DocRoot), WPT's script-test wrappers generated as wptserve does (wptwrapper.go).
// As the proxy it is the network allowlist (network.go): it answers only its own
// origins, and ProxySettings points the browsers at it. It knows nothing of the
// oracle's requests, pools or store: package oracle registers pages and navigates.
package origin
