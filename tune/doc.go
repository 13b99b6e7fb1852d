// Package tune finds GC settings by experiment. It runs a program once as it is (the
// baseline), calibrates memdoctor's model of the GC pacer on that run (package diagnose:
// the live heap, the allocation rate, the runtime's other memory), asks the model for the
// settings that fit a memory budget (GOGC alone, GOMEMLIMIT with GOGC=off, GOMEMLIMIT with the
// GOGC the gc-overhead advice gives), runs the program under each for as long as the
// baseline, and keeps the one that cuts the GC's work most while its measured peak RSS stays
// inside the budget with a safety margin. Every candidate carries the model's prediction and
// what was measured, so the prediction error is in plain view.
//
// The experiment's logic is here; running the program is a Runner's (memdoctor tune records
// each run as a session with internal/recorder, which compare can read). The package never
// prints.
package tune
