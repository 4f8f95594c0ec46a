package main

func init() {
	register(command{name: "preflight", summary: "check whether this host can give honest numbers, and fingerprint it", run: notBuilt("preflight", 2)})
}
