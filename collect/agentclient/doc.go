// Package agentclient is the client side of the memdoctor agent's HTTP contract (see package
// agent): it reads an embedded agent's description, streams its metrics history as
// session.Sample values, lists and fetches its profiles, events and flight-recorder traces.
// `memdoctor watch` uses it to copy an agent's whole history into a session.
//
// Responses are read with bounded memory: the metrics history is decoded line by line as it
// arrives, and every other body is capped (WithMaxBodyBytes).
package agentclient
