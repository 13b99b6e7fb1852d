package modproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Env is the environment of a go command that fetches modules as a fresh machine would, from
// the proxy directory dir first, then from the module cache this machine already has (its
// download directory is itself a proxy), never from the network: modcache is the new, empty
// module cache to fill. The checksum database is off, so go.sum files are what verify.
func Env(dir, modcache string) ([]string, error) {
	have, err := machineModCache()
	if err != nil {
		return nil, err
	}
	return proxyEnv(dir, modcache, have), nil
}

// machineModCache is this machine's module cache (go env GOMODCACHE).
func machineModCache() (string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	modcache := strings.TrimSpace(string(out))
	if modcache == "" {
		return "", errors.New("go env GOMODCACHE: empty")
	}
	return modcache, nil
}

// proxyEnv is Env's environment: the proxy directory dir first, then the download directory
// of the module cache have, filling modcache.
func proxyEnv(dir, modcache, have string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOPROXY", "GOSUMDB", "GOWORK", "GOFLAGS", "GOMODCACHE", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOTOOLCHAIN":
		default:
			env = append(env, kv)
		}
	}
	return append(env,
		"GOPROXY="+fileURL(dir)+","+fileURL(filepath.Join(have, "cache", "download")),
		"GOSUMDB=off", "GOWORK=off", "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local",
		"GOMODCACHE="+modcache)
}

func fileURL(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return "file://" + filepath.ToSlash(abs)
}

// Sums returns the go.sum lines of a module version (the zip's and the go.mod's hash) as the
// go command computes them when it downloads the version with env (see Env).
func Sums(env []string, modPath, version string) ([]string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modPath+"@"+version)
	cmd.Env = env
	cmd.Dir = os.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var m struct{ Sum, GoModSum, Error string }
	if jerr := json.Unmarshal(out, &m); err != nil || jerr != nil || m.Error != "" || m.Sum == "" {
		return nil, fmt.Errorf("go mod download %s@%s: %v %s %s", modPath, version, err, m.Error, strings.TrimSpace(stderr.String()))
	}
	return []string{
		modPath + " " + version + " " + m.Sum,
		modPath + " " + version + "/go.mod " + m.GoModSum,
	}, nil
}
