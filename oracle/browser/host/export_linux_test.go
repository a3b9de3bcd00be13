package host

// EachAccepted is eachAccepted, for the external test of host/nodelay_linux.go (it launches
// an engine through package routes, which imports this package).
var EachAccepted = eachAccepted
