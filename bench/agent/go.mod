module github.com/memdoctor/memdoctor/bench/agent

go 1.25.0

require (
	github.com/grafana/pyroscope-go v1.4.3
	github.com/memdoctor/memdoctor/agent v0.0.0
	mosn.io/holmes v1.0.2
	mosn.io/pkg v0.0.0-20211217101631-d914102d1baf
)

require (
	github.com/StackExchange/wmi v0.0.0-20190523213315-cbe66965904d // indirect
	github.com/go-ole/go-ole v1.2.4 // indirect
	github.com/grafana/pyroscope-go/godeltaprof v0.1.11 // indirect
	github.com/hashicorp/go-syslog v1.0.0 // indirect
	github.com/klauspost/compress v1.18.7 // indirect
	github.com/rcrowley/go-metrics v0.0.0-20200313005456-10cdbea86bc0 // indirect
	github.com/shirou/gopsutil v3.20.11+incompatible // indirect
	golang.org/x/sys v0.47.0 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.0.0 // indirect
	mosn.io/api v0.0.0-20210204052134-5b9a826795fd // indirect
)

replace github.com/memdoctor/memdoctor/agent => ../../agent
