// Package orchestrator runs the reproduction: it plans the backend × pin ×
// threads matrix, starts server and client (Docker containers or pinned
// processes), loads and verifies the dataset, proves reads hit the device,
// takes medians and writes the results bundle, table and report.
package orchestrator
