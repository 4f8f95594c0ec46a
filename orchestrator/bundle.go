package orchestrator

import (
	"github.com/tierbench/tierbench/results"
)

// The bundle's format — its records, their writers and readers, and the
// verdicts derived from them — is package results. The run writes it
// through the names below, which keep the run's code as it reads.

// SchemaVersion is the version of results.json and of the cells.jsonl
// lines; a reader refuses a bundle with a newer one.
const SchemaVersion = results.SchemaVersion

// Bundle file names.
const (
	fileFingerprint  = results.FileFingerprint
	filePreflight    = results.FilePreflight
	fileCells        = results.FileCells
	fileResults      = results.FileResults
	fileTable        = results.FileTable
	fileReport       = results.FileReport
	filePlan         = results.FilePlan
	dirLogs          = results.DirLogs
	fileScenarios    = results.FileScenarios
	fileCeilings     = results.FileCeilings
	fileLatency      = results.FileLatency
	dirLatency       = results.DirLatency
	fileLadder       = results.FileLadder
	dirHosts         = results.DirHosts
	fileNetwork      = results.FileNetwork
	fileHostsLatency = results.FileHostsLatency
)

// The bundle's records.
type (
	Placement          = results.Placement
	Row                = results.Row
	PassRecord         = results.PassRecord
	LoadRecord         = results.LoadRecord
	FailRecord         = results.FailRecord
	Plan               = results.Plan
	Results            = results.Results
	Cell               = results.Cell
	PassEvidence       = results.PassEvidence
	CellEvidence       = results.CellEvidence
	NodeLoad           = results.NodeLoad
	NodePass           = results.NodePass
	CellNode           = results.CellNode
	ClientShare        = results.ClientShare
	OwnerProof         = results.OwnerProof
	ServerInfo         = results.ServerInfo
	SampleCheck        = results.SampleCheck
	CeilingRecord      = results.CeilingRecord
	LatencyRecord      = results.LatencyRecord
	HostsLatencyRecord = results.HostsLatencyRecord
	HostsPlan          = results.HostsPlan
	HostSummary        = results.HostSummary
	NetworkCheck       = results.NetworkCheck
	Plot               = results.Plot
	Ladder             = results.Ladder
	LadderLayer        = results.LadderLayer
	FileSum            = results.FileSum
)

type (
	cellsLog        = results.CellsLog
	preflightOutput = results.Preflight
	preflightCheck  = results.PreflightCheck
	scenarioIndex   = results.ScenarioIndex
	scenarioEntry   = results.ScenarioEntry
)

// The bundle's readers and writers.
var (
	openCellsLog     = results.OpenCellsLog
	readCells        = results.ReadCells
	parseCells       = results.ParseCells
	readFailures     = results.ReadFailures
	writeJSON        = results.WriteJSON
	writeFile        = results.WriteFile
	readJSON         = results.ReadJSON
	appendJSONL      = results.AppendJSONL
	readOptional     = results.ReadOptional
	readCeilings     = results.ReadCeilings
	parseCeilings    = results.ParseCeilings
	readLatency      = results.ReadLatency
	parseLatency     = results.ParseLatency
	readHostsLatency = results.ReadHostsLatency
	checksumFiles    = results.ChecksumFiles
	verifyBundle     = results.Verify
	parsePreflight   = results.ParsePreflight
)

// The verdicts.
var (
	recordBytes       = results.RecordBytes
	aggregate         = results.Aggregate
	median            = results.Median
	judgePass         = results.JudgePass
	judgeEvidence     = results.JudgeEvidence
	cellKey           = results.CellKey
	passKey           = results.PassKey
	donePasses        = results.DonePasses
	isScenarioRow     = results.IsScenarioRow
	scenarioExclusion = results.ScenarioExclusion
	summarizeEvidence = results.SummarizeEvidence
	applyCeilings     = results.ApplyCeilings
	cellExtras        = results.CellExtras
)

// Thresholds and exclusion reasons of the verdicts.
const (
	sectorBytes           = results.SectorBytes
	minSectorShare        = results.MinSectorShare
	maxMemorySectorShare  = results.MaxMemorySectorShare
	minDeviceReadsPerGet  = results.MinDeviceReadsPerGet
	serverCPUBoundShare   = results.ServerCPUBoundShare
	aboveCeilingTolerance = results.AboveCeilingTolerance
	linkBoundShare        = results.LinkBoundShare
	minDeviceToMemory     = results.MinDeviceToMemory

	excludedMisses        = results.ExcludedMisses
	excludedMemoryServed  = results.ExcludedMemoryServed
	excludedUnverified    = results.ExcludedUnverified
	excludedFailed        = results.ExcludedFailed
	excludedRefused       = results.ExcludedRefused
	excludedDeviceRead    = results.ExcludedDeviceRead
	excludedNoDeviceReads = results.ExcludedNoDeviceReads
)

// Scenarios of the reference (results.ScenarioStorage …).
const (
	ScenarioStorage     = results.ScenarioStorage
	ScenarioMemory      = results.ScenarioMemory
	ScenarioLocalMemory = results.ScenarioLocalMemory
	ScenarioAll         = results.ScenarioAll
)

// Scenarios lists the --scenario names in the order "all" runs them.
var Scenarios = results.Scenarios

// scenarioTitle is the section heading of each scenario, the reference's.
var scenarioTitle = results.ScenarioTitle

// Reading a bundle outside the run (results.Open).
type Opened = results.Opened

var (
	// OpenBundle reads a bundle directory or its results.json.
	OpenBundle = results.Open
	// ErrNewerSchema is results.ErrNewerSchema.
	ErrNewerSchema = results.ErrNewerSchema
	// ErrTampered is results.ErrTampered.
	ErrTampered = results.ErrTampered
)
