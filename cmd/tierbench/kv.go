package main

func init() {
	register(command{name: "kv", summary: "in-process benchmark of the tiered store (the KV layer)", run: notBuilt("kv", 4)})
}
