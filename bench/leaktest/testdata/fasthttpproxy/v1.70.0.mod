module example.com/proof

go 1.25.0

require (
	github.com/memdoctor/memdoctor/leaktest v0.0.0
	github.com/valyala/fasthttp v1.70.0
)

require (
	github.com/andybalholm/brotli v1.2.1 // indirect
	github.com/klauspost/compress v1.18.5 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/text v0.34.0 // indirect
)

replace github.com/memdoctor/memdoctor/leaktest => LEAKTEST_DIR
