package report

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierbench/tierbench/results"
)

// ErrUnsealed is wrapped by Rerender's refusal of a bundle whose sums
// fail or are missing: rendering it would seal what nothing vouched for.
var ErrUnsealed = errors.New("report: the bundle's sums do not hold")

// Signer is who renders a bundle again, recorded when a render seals what
// the old sums did not vouch for.
type Signer struct {
	By      string // user@host
	Version string // the tierbench doing it
}

// Rerender is `tierbench report DIR`: it renders the bundle again only
// when its sums hold. A bundle sealed before results.json was covered
// whose legacy sums hold is rendered and sealed whole, and the upgrade
// recorded in signings.jsonl. Any other bundle — sums failing, or none —
// is refused (ErrUnsealed, naming what the check found) unless resignWhy
// is given: then it is rendered and sealed as it is, and who, when, why
// and what the check found are recorded in signings.jsonl, which the new
// sums cover. Every scenario of an all bundle is checked before any is
// rendered.
func Rerender(dir string, who Signer, resignWhy string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("report: no bundle directory")
	}
	if !IsAll(dir) {
		signing, err := signingFor(dir, who, resignWhy)
		if err != nil {
			return "", err
		}
		return render(dir, signing)
	}
	index, err := results.ReadScenarioIndex(dir)
	if err != nil {
		return "", err
	}
	signings := map[string]*results.Signing{}
	var refused []error
	top, err := results.CheckFiles(dir)
	if err != nil {
		return "", err
	}
	if len(top.Findings) > 0 && resignWhy == "" {
		refused = append(refused, fmt.Errorf("%w: %s: %s; refusing to render (and so seal) it: `tierbench report --resign WHY %s` renders and seals it anyway and records why in each scenario",
			ErrUnsealed, dir, strings.Join(top.Findings, "; "), dir))
	}
	for _, e := range index.Scenarios {
		s, err := signingFor(filepath.Join(dir, e.Dir), who, resignWhy)
		if err != nil {
			refused = append(refused, fmt.Errorf("scenario %s: %w", e.Scenario, err))
		}
		signings[e.Dir] = s
	}
	if len(refused) > 0 {
		return "", errors.Join(refused...)
	}
	return renderAll(dir, func(sub string) *results.Signing { return signings[sub] })
}

// signingFor checks the bundle's sums and says what its render must
// record: nothing when its sums hold, an upgrade when its legacy sums
// hold, a resign when told why; else the refusal.
func signingFor(dir string, who Signer, resignWhy string) (*results.Signing, error) {
	in, err := results.Check(dir)
	if err != nil {
		return nil, err
	}
	s := &results.Signing{Time: time.Now().UTC(), By: who.By, Version: who.Version, Findings: in.Findings}
	switch {
	case in.Sealed && in.Holds() && resignWhy == "":
		return nil, nil
	case resignWhy != "":
		s.Kind, s.Why = "resign", resignWhy
		if !in.Sealed && !in.Legacy {
			s.Findings = append(s.Findings, in.Uncovered())
		}
		return s, nil
	case in.Legacy && in.Holds():
		s.Kind, s.Why = "upgrade", "sealed whole by `tierbench report`: the legacy sums held; "+in.Uncovered()
		return s, nil
	case len(in.Findings) > 0:
		return nil, fmt.Errorf("%w: %s: %s; refusing to render (and so seal) it: `tierbench report --verify %s` lists what differs, `tierbench report --resign WHY %s` renders and seals it anyway and records why",
			ErrUnsealed, dir, strings.Join(in.Findings, "; "), dir, dir)
	}
	return nil, fmt.Errorf("%w: %s: %s; refusing to render (and so seal) it: `tierbench report --resign WHY %s` renders and seals it as it is and records why",
		ErrUnsealed, dir, in.Uncovered(), dir)
}
