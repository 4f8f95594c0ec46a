// Package rig is the one door to the hardware a run uses: the small
// interfaces the facade and its steps drive — Driver (where servers and
// clients start: rig/process, rig/docker), ServerHandle and ServerProbe
// (a started server and how it is reached and counted), ServerHost (the
// machine under the data dir) — and what they share: the RESP probe
// client, /proc readings, the hostprobe request and answer.
//
// A runtime says what it can do in Capabilities; nothing above this
// package asks a runtime its name or its concrete type.
package rig
