package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
)

// Scenario does one action of a job, writing what it saw into the result.
type Scenario func(*Job, map[string]any) error

// Run reads the job from stdin, does its scenario and prints the result as one JSON line: the client's name, its
// library version and codecs, and what the scenario wrote. A "describe" job does no scenario. Where the driver's
// own limit passed it prints {"waiting_for": ...} and exits 3; any other failure goes to stderr with exit 1.
func Run(client, version string, codecs []string, scenarios map[string]Scenario) {
	var j Job
	if err := json.NewDecoder(os.Stdin).Decode(&j); err != nil {
		fmt.Fprintln(os.Stderr, "reading the job:", err)
		os.Exit(1)
	}
	result := map[string]any{"client": client, "version": version, "codecs": codecs}
	if j.Action != "describe" {
		scenario, known := scenarios[j.Action]
		if !known {
			fmt.Fprintln(os.Stderr, "unknown action", j.Action)
			os.Exit(1)
		}
		if err := scenario(&j, result); err != nil {
			var waited Waiting
			if errors.As(err, &waited) {
				Emit(map[string]any{"waiting_for": waited.What})
				os.Exit(3)
			}
			fmt.Fprintln(os.Stderr, client+" driver:", err)
			os.Exit(1)
		}
	}
	Emit(result)
}

var printMu sync.Mutex

// Emit prints value as one JSON line (one line at a time, whichever goroutine prints)
func Emit(value any) {
	printMu.Lock()
	defer printMu.Unlock()
	line, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(line))
}

// ModuleVersion: the version of the module at path (the client library) this binary was built with
func ModuleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				return dep.Version
			}
		}
	}
	return "unknown"
}
