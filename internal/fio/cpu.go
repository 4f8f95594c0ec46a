package fio

// CPUBoundShare: a fio run whose jobs used at least this share of the
// CPUs they ran on measured fio's own CPU, not the disk: its IOPS is a
// floor of what the disk can do, and a program that spends less CPU per
// read than fio can beat it on the same CPUs.
const CPUBoundShare = 0.9

// CPU is what fio's own CPU says about one run.
type CPU struct {
	// MicrosPerRead is fio's user + system CPU per read completed, in µs.
	MicrosPerRead float64 `json:"cpu_us_per_read"`
	// SystemMicrosPerRead is the system (kernel) part of MicrosPerRead:
	// the read's path through the kernel, which a server driving the
	// same interface pays too.
	SystemMicrosPerRead float64 `json:"cpu_sys_us_per_read,omitempty"`
	// Share is the CPU fio used over the CPUs its jobs could run on
	// (1 = every one busy all the time).
	Share float64 `json:"cpu_share"`
	// Bound: Share ≥ CPUBoundShare.
	Bound bool `json:"cpu_bound,omitempty"`
}

// CPUOf judges a group-reported run from fio's usr_cpu and sys_cpu, which
// are percent of one CPU per job, averaged over the jobs (fio divides the
// jobs' summed rusage by their summed runtime), its jobs and its IOPS.
// cpus is how many CPUs the jobs could run on; 0 or more than jobs means
// each job had one of its own (DepthLadder never gives more jobs than
// CPUs). A run with no IOPS has no CPU per read.
func CPUOf(usrPct, sysPct float64, jobs int, iops float64, cpus int) CPU {
	jobs = max(jobs, 1)
	if cpus <= 0 || cpus > jobs {
		cpus = jobs
	}
	busy := (usrPct + sysPct) / 100 * float64(jobs) // CPUs' worth busy
	c := CPU{Share: busy / float64(cpus)}
	if iops > 0 && !bad(busy) {
		c.MicrosPerRead = busy * 1e6 / iops
		if !bad(sysPct) {
			c.SystemMicrosPerRead = sysPct / 100 * float64(jobs) * 1e6 / iops
		}
	}
	c.Bound = c.Share >= CPUBoundShare
	return c
}

// CPU judges the run r, its jobs on cpus CPUs (see CPUOf).
func (r Result) CPU(cpus int) CPU { return CPUOf(r.UsrCPU, r.SysCPU, r.Jobs, r.IOPS, cpus) }
