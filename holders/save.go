package holders

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memdoctor/memdoctor/infile"
)

// Files a result is kept under in a session directory: the JSON result, and the profile
// whose frames are the paths.
const (
	File        = "holders.json"
	ProfileFile = "holders.pb.gz"
)

// maxFile bounds a saved result read back.
const maxFile = 64 << 20

// Save writes the result and its profile into a session directory, each through a temporary
// file renamed into place, readable by the user alone.
func Save(dir string, r *Result) error {
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	var pb bytes.Buffer
	if err := r.Profile().Write(&pb); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, File), js.Bytes()); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, ProfileFile), pb.Bytes())
}

func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Load reads a result saved in a session directory; ok is false when there is none.
func Load(dir string) (r *Result, ok bool, err error) {
	path := filepath.Join(dir, File)
	b, err := infile.ReadFile(path, maxFile)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	r = &Result{}
	if err := json.Unmarshal(b, r); err != nil || r.Schema != Schema {
		return nil, false, fmt.Errorf("%s: not a memdoctor holders result", path)
	}
	return r, true, nil
}

// Attempt is the kind under which a recording counts its reading of the holders in the
// session manifest's attempts (session.Manifest.Attempts): one try, its error when it could
// not be made (the target had exited, reading was turned off, the process could not be read).
const Attempt = "holders"

// Why a recording read no holders, as its attempt's error says it; any other error is a
// reading that failed.
const (
	// UnreadExited: the target had exited before the recording could read its heap.
	UnreadExited = "the target exited before its heap could be read"
	// UnreadOff: the recording was told not to read it (run and demo --holders=false).
	UnreadOff = "reading it was turned off (--holders=false)"
)
