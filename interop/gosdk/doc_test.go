// Package gosdk holds the tests of toolguard in front of real
// modelcontextprotocol/go-sdk servers: go-sdk exposes no registry through
// its public API, so the guard takes no tool set for it (the server decides
// every call) and these tests pin that the guard translates go-sdk's own
// not-found answer, with the list go-sdk gave that caller, and changes no
// other answer.
package gosdk
