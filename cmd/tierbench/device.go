package main

func init() {
	register(command{name: "device", summary: "raw random-read IOPS of the device layer, optionally beside fio", run: notBuilt("device", 3)})
}
