package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tierbench/tierbench/orchestrator/fault"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// EnsureServerImage makes sure the image --server-image names is on the
// engine (where names it for the sentences: "" for the local one). A
// present image is used as it is; an absent one is pulled only when pull
// (--pull) is set, and otherwise refused with the line that pulls it: a
// run never reaches a registry the user did not ask it to.
func EnsureServerImage(ctx context.Context, cli *client.Client, where, ref string, pull bool) error {
	if _, err := cli.ImageInspect(ctx, ref); err == nil {
		return nil
	} else if !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("orchestrator: --server-image %s: inspect it on the Docker engine%s: %w", ref, where, err)
	}
	if !pull {
		return fmt.Errorf("%w: --server-image %s is not on the Docker engine%s, and a run pulls nothing unless asked: run\n\n    docker pull %s\n\nand run again, or give --pull", fault.ErrConfig, ref, where, ref)
	}
	rc, err := cli.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return fmt.Errorf("orchestrator: --pull: pull %s to the Docker engine%s: %w", ref, where, err)
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("orchestrator: --pull: pull %s: read progress: %w", ref, err)
		}
		if msg.Error != "" {
			return fmt.Errorf("orchestrator: --pull: pull %s to the Docker engine%s: %s", ref, where, msg.Error)
		}
	}
	if _, err := cli.ImageInspect(ctx, ref); err != nil {
		return fmt.Errorf("orchestrator: --pull: no image %s after the pull: %w", ref, err)
	}
	return nil
}

// EnsureImage is EnsureServerImage on the driver's own engine: ref is
// there, or pulled when pull.
func (d *Driver) EnsureImage(ctx context.Context, ref string, pull bool) error {
	return EnsureServerImage(ctx, d.Engine, "", ref, pull)
}
