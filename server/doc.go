// Package server is the tiered RESP server: it speaks RESP2 over TCP on top
// of the hybrid-log store in server/store.
package server
