package main

func init() {
	register(command{name: "bench", summary: "RESP load generator: offline throughput, online latency", run: notBuilt("bench", 6)})
}
