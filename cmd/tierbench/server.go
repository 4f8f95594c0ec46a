package main

func init() {
	register(command{name: "server", summary: "run the tiered RESP server", run: notBuilt("server", 5)})
}
