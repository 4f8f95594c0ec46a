// Package ceiling holds what a run measures with fio besides the
// preflight's curve, each against that curve (the ceiling) read from the
// bundle's preflight.json: the re-measurement of a cell above its ceiling
// (Recheck, ceilings.jsonl), fio's CPU per read at a cell's disk depth
// through the row's own interface (MeasureFioCPU, fio-cpu.jsonl), the
// wait for the disk to read at its ceiling again after a load
// (SettleDisk, AwaitDisk) and fio side by side with a pass (Beside).
//
// Invariants: fio only ever reads, read-only, the server's own files in
// the data dir, with the server idle; a fio that fails is recorded or
// said, never fatal; what the bundle already holds is not measured again
// (--resume). The package reaches the run only through Env and imports
// nothing of the facade.
package ceiling
