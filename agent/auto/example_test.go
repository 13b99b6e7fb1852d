package auto_test

import (
	"log"
	"net/http"

	_ "net/http/pprof"

	"github.com/memdoctor/memdoctor/agent"
	"github.com/memdoctor/memdoctor/agent/auto"
)

// A service turns the agent on with a blank import; the environment configures it, e.g.
// MEMDOCTOR_MEMLIMIT_RATIO=0.9 MEMDOCTOR_BUDGET=2GiB ./service. Serving
// http.DefaultServeMux on loopback then serves /debug/pprof/ and /debug/memdoctor/ side by
// side, for `memdoctor watch http://127.0.0.1:6060`.
func Example() {
	// import _ "github.com/memdoctor/memdoctor/agent/auto"
	if err := auto.Err(); err != nil {
		log.Printf("memdoctor agent off: %v", err)
	}
	if a := auto.Agent(); a != nil {
		go func() {
			for p := range a.Pressure() {
				if p.Level >= agent.PressureCritical {
					log.Printf("memory critical: %.0f%% of the budget", 100*p.Fraction)
				}
			}
		}()
	}
	go http.ListenAndServe("127.0.0.1:6060", nil)
}
