// Package plan is what a run measures and how: Config, the command line
// of `tierbench run` resolved against a profile and the environment, and
// checked before anything starts.
//
// Invariants: Resolve is pure apart from reading the password file or
// variable an external server's address names; it never creates,
// starts or removes anything. Every refusal of a combination wraps
// fault.ErrConfig and is said once, all of them joined, so a command line
// is put right in one go. A refusal that belongs to a measurement, a
// dimension or a runtime is that Part's (Supports), not this package's:
// the facade hands Resolve its registry of parts. Record and ConfigOf
// are each other's inverse for every exported field (plan.json).
package plan
