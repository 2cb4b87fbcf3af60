// Command flameox-mcp serves flameox's analysis and capture tools to an MCP
// client over stdio.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/flameox/flameox/internal/command"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/mcpserver"
)

const description = `Serve flameox's tools to an MCP client over stdin/stdout.

Tools are generated from the registry: one analysis tool per operation
(summarize_cpu_hotspots, ...), one capture tool per provider
(capture_node_cpu_profile, ...), and reanalyze, preserve and
prepare_providers. A call runs flameox-rank, or flameox-capture |
flameox-decode | flameox-rank, as subprocesses found beside this
executable (or in --bin-dir / $FLAMEOX_BIN_DIR). Cancelling a call ends
every process it started. A capture's staged outputs stay in session
scratch behind a handle until the session ends; preserved bundles are
resources flameox://bundle/<id>. See docs/mcp.md.

Example MCP client configuration (Claude Desktop, Cursor, VS Code, ...):

  {
    "mcpServers": {
      "flameox": {
        "command": "/usr/local/bin/flameox-mcp",
        "args": ["--concurrency", "4"]
      }
    }
  }

Examples:
  flameox-mcp --list-tools | jq '.tools[].name'
  npx @modelcontextprotocol/inspector@0.15.0 --cli flameox-mcp --method tools/list`

type cli struct {
	BinDir      string        `help:"Directory holding flameox-rank, flameox-decode and flameox-capture (default: $FLAMEOX_BIN_DIR, else this executable's directory)." type:"path" placeholder:"DIR"`
	Concurrency int           `help:"Tool calls served at once (1-100)." default:"4"`
	Grace       time.Duration `help:"Time a cancelled call's processes get between SIGTERM and SIGKILL." default:"5s"`
	ListTools   bool          `help:"Print the generated tools (the tools/list result) as JSON and exit."`
	Store       []string      `help:"Evidence store whose bundles are resources from the start (repeatable); preserve adds its own." type:"path" placeholder:"DIR"`
}

func main() {
	os.Exit(run())
}

func run() int {
	var c cli
	if _, err := command.Parse(&c, "flameox-mcp", description, os.Args[1:]); err != nil {
		return fail(err)
	}
	if c.Concurrency < 1 || c.Concurrency > 100 {
		return fail(evidence.Failf(evidence.CodeInvalidArgument, "--concurrency must be 1 to 100, got %d", c.Concurrency))
	}
	if c.Grace <= 0 {
		return fail(evidence.Failf(evidence.CodeInvalidArgument, "--grace must be positive, got %s", c.Grace))
	}
	s, err := mcpserver.New(mcpserver.Options{BinDir: c.BinDir, Grace: c.Grace, Version: version(), Stores: c.Store})
	if err != nil {
		return fail(err)
	}
	if c.ListTools {
		b, err := json.MarshalIndent(map[string]any{"tools": s.Tools()}, "", "  ")
		if err != nil {
			return fail(err)
		}
		fmt.Println(string(b))
		return 0
	}
	if missing := s.Missing(); len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "flameox-mcp: not in %s: %v; calls that need them fail with a retry action\n", s.BinDir(), missing)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// stdout carries the protocol: diagnostics go to stderr only.
	if err := s.ServeStdio(ctx, os.Stdin, os.Stdout, c.Concurrency, os.Stderr); err != nil && ctx.Err() == nil {
		return fail(err)
	}
	return 0
}

func fail(err error) int {
	f := evidence.AsFailure(err, evidence.CodeInternal)
	fmt.Fprint(os.Stderr, command.FailureText("flameox-mcp", f))
	return evidence.ExitCode(f.Code)
}

// version is what the server reports to clients: the module version, else
// the commit it was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	for _, kv := range bi.Settings {
		if kv.Key == "vcs.revision" {
			return "dev+" + kv.Value
		}
	}
	return "dev"
}
