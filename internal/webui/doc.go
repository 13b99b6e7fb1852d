// Package webui serves a session's HTML report on a local address, with pprof's own web UI
// (flame graph, top, peek, graph) for any stored snapshot and for the difference of any
// two, one click away from the page. It serves no local file but the session's: pprof's
// source and disassembly views (which open whatever files a profile names) and its config
// writer are refused, and profiles are read within pprofio's bounds.
//
// Each pprof UI is created on first use, from github.com/google/pprof/driver with a custom
// HTTPServer that hands its handlers to this server, and only a few are kept at a time (each
// holds its parsed profiles). Its views cost memory in proportion to the profile's frames
// (the flame graph sends every stack to the browser), so pprof is given at most
// maxUIFrames of them: past that, the stacks that matter least are folded into one frame
// that says so, totals unchanged (for a diff, built here as pprof's -diff_base would, a
// stack is kept or folded on both sides at once). One view is built at a time. Debug data is sensitive: the caller binds to loopback by
// default, and when a token is set (it must pass wire.CheckToken, as the agent's does) every
// request must carry it (Authorization: Bearer, a
// ?token= query, or the cookie a first authorised visit sets); without a token, requests
// whose Host is not a loopback name are refused, which defeats DNS rebinding.
package webui
