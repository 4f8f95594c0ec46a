package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrVerify is wrapped when --verify found a wrong value, a miss or an
// error reply.
var ErrVerify = errors.New("bench: verify failed")

// ErrReplies is wrapped when the server answered some requests with errors.
var ErrReplies = errors.New("bench: the server answered with errors")

// Run loads the key range (unless SkipLoad), then runs the offline cells or
// the online run. Human lines go to stdout, or to stderr with JSON, in which
// case stdout receives the JSON document alone. Results measured before a
// failure are still printed, marked incomplete, and the failure returned.
// Error replies, load shortfalls and verify failures are returned as errors
// after the figures are printed. Errors wrapping ErrUsage mean cfg is wrong.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	p, err := cfg.plan()
	if err != nil {
		return err
	}
	human := stdout
	if cfg.JSON {
		human = stderr
	}
	rep := &Report{Cells: []CellResult{}}
	measured := false
	noteTLS := func() {
		if rep.TLS == nil && p.spec.agreed.info != nil {
			rep.TLS = p.spec.agreed.info
			printTLS(human, rep.TLS)
		}
	}
	runErr := func() error {
		if !cfg.SkipLoad {
			l, err := load(ctx, p, stderr)
			if l != nil {
				noteTLS()
				measured = true
				rep.Load = l
				printLoad(human, l)
			}
			if err != nil {
				return err
			}
			if l.Acknowledged != l.Keys {
				return fmt.Errorf("bench: load acknowledged %d of %d keys; first error: %s", l.Acknowledged, l.Keys, l.FirstError)
			}
		}
		if cfg.Runtime == 0 {
			return nil
		}
		if cfg.Online {
			o, err := runOnline(ctx, p, human)
			if o != nil {
				noteTLS()
				measured = true
				rep.Online = o
			}
			return err
		}
		for _, threads := range cfg.Threads {
			c, err := runCell(ctx, p, threads)
			if c != nil {
				noteTLS()
				measured = true
				rep.Cells = append(rep.Cells, *c)
				printCell(human, c)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}()
	if cfg.JSON && measured {
		if err := writeJSON(stdout, rep); err != nil {
			return errors.Join(runErr, fmt.Errorf("bench: write JSON: %w", err))
		}
	}
	if runErr != nil {
		return runErr
	}
	return checkReplies(p, rep)
}

// checkReplies turns error replies and verify failures into an error, so
// they are never mistaken for a clean run.
func checkReplies(p *plan, rep *Report) error {
	type tally struct {
		what                       string
		errors, misses, mismatches int64
		firstError                 string
	}
	var all []tally
	for _, c := range rep.Cells {
		all = append(all, tally{fmt.Sprintf("%s with %d threads", c.Op, c.Threads), c.Errors, c.Misses, c.Mismatches, c.FirstError})
	}
	if o := rep.Online; o != nil {
		all = append(all, tally{"online run", o.Errors, o.Misses, o.Mismatches, o.FirstError},
			tally{"online warm-up", o.Warmup.Errors, o.Warmup.Misses, o.Warmup.Mismatches, o.FirstError})
	}
	for _, t := range all {
		if p.Verify && (t.mismatches > 0 || t.misses > 0 || t.errors > 0) {
			return fmt.Errorf("%w: %s: %d mismatched values, %d misses, %d error replies", ErrVerify, t.what, t.mismatches, t.misses, t.errors)
		}
		if t.errors > 0 {
			return fmt.Errorf("%w: %s: %d error replies; first: %q", ErrReplies, t.what, t.errors, t.firstError)
		}
	}
	return nil
}
