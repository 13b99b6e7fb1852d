module example.com/proof

go 1.25.0

require (
	github.com/memdoctor/memdoctor/leaktest v0.0.0
	github.com/valyala/fasthttp v1.69.0
)

require (
	github.com/andybalholm/brotli v1.2.0 // indirect
	github.com/klauspost/compress v1.18.2 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/net v0.48.0 // indirect
	golang.org/x/text v0.32.0 // indirect
)

replace github.com/memdoctor/memdoctor/leaktest => LEAKTEST_DIR
