package browser

// EachAccepted is eachAccepted, for the external test of nodelay.go (it launches an
// engine through package routes, which imports this package).
var EachAccepted = eachAccepted
