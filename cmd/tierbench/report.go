package main

func init() {
	register(command{name: "report", summary: "render table.md and report.md again from a results bundle", run: notBuilt("report", 7)})
}
