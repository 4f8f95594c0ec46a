package reproduce

import (
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestMain removes the binary the tests built (testenv.Main).
func TestMain(m *testing.M) { testenv.Main(m) }
