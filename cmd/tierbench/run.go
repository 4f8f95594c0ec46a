package main

func init() {
	register(command{name: "run", summary: "the one-command reproduction of the backend x pin x threads matrix", run: notBuilt("run", 7)})
}
