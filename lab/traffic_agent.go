package lab

import (
	"context"
	"net/http"
	"time"
)

func trafficAgent() Scenario {
	return Scenario{
		Name: "traffic-agent",
		Story: "The API-traffic agent of the first story, all in one process (the scenario behind " +
			"memdoctor demo): it reassembles captured TCP streams with unbounded per-connection " +
			"out-of-order buffers (tcp-reassembly), sniffs the format of uploaded samples with " +
			"regular expressions compiled on every call (regexp-per-call) and reads gzip " +
			"uploads whole with io.ReadAll (gzip-readall). The live heap grows steadily from " +
			"the reassembly buffers, while the sniffer and the uploads dominate the allocation " +
			"profile. Each has its fix in its own scenario.",
		Expect: Expect{
			Kinds: []string{kindHeapLeak},
			// The leaking heap makes the GC rare (about once a second), so what the sniffer
			// and the uploads allocate costs 1-2% of the CPU in GC work on an idle machine:
			// an allocation hotspot as information (a regexp compiled per call), a warning
			// only where the GC is busier.
			Allowed:  []string{kindAllocationHotspot, kindGCOverhead},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*assembler).bufferSegment",
			Watch:    60 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runTrafficAgent,
	}
}

func runTrafficAgent(ctx context.Context, env Env) error {
	a := newAssembler(10 * time.Minute)
	sn := &sniffer{}
	up := &uploadService{}
	uploads, err := newUploadLoad(4)
	if err != nil {
		return err
	}
	return serve(ctx, env, service{
		name: "traffic-agent",
		routes: map[string]http.HandlerFunc{
			"POST /ingest": a.handleIngest,
			"POST /sniff":  sn.handleSniff,
			"POST /upload": up.handleUpload,
		},
		loads:      []load{captureLoad(6400, 2, 0.02), sniffLoad(150), uploads},
		background: []func(context.Context){a.expireLoop},
	})
}
