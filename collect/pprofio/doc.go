// Package pprofio reads pprof profiles that may be hostile: a file a user was handed, a body
// a target served. Every read is bounded three ways: the bytes read (gzipped or not), the
// bytes they decompress to, and the memory the parsed profile would take, estimated from
// the encoding before anything is decoded. A gzip bomb, a profile gzipped twice or a
// protobuf dense with tiny samples is refused with an error that names the input and the
// limit, and memdoctor's own memory stays bounded whatever it reads.
//
// It accepts what profile.ParseData accepts (a gzipped or raw protobuf profile, and the
// legacy text and binary formats), but decompresses itself through a limited reader and
// hands ParseData raw bytes, so that ParseData never gunzips without a bound.
//
// It stands on the readers' layer (docs/development.md) and imports only infile below it:
// the collectors (collect/scrape, collect/agentclient) read what a target serves through it,
// and the evidence, source/pprofdir and the report read profiles on disk through it from
// above.
package pprofio
