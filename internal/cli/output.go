package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/memdoctor/memdoctor/report"
)

// writeOutput writes what write produces to path for flag ("-" = stdout): through a private
// temporary file renamed into place, so that a failed write leaves no half file.
func writeOutput(e *env, flag, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(e.stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("--%s %s: %w", flag, path, err)
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(0o600) // for the user alone, like the session's files
	}
	var size int64
	if st, serr := tmp.Stat(); err == nil && serr == nil {
		size = st.Size()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("--%s %s: %w", flag, path, err)
	}
	if flag == "html" {
		fmt.Fprintf(e.stderr, "HTML report written to %s (%s)\n", path, report.Bytes(uint64(size)))
	}
	return nil
}
