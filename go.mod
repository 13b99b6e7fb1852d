module github.com/memdoctor/memdoctor

go 1.25.0

require github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
