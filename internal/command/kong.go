package command

import (
	"os"

	"github.com/alecthomas/kong"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

// Parse parses args into cli with kong. A usage error is an
// INVALID_ARGUMENT failure; --help prints and exits 0.
func Parse(cli any, name, description string, args []string, opts ...kong.Option) (*kong.Context, error) {
	opts = append([]kong.Option{
		kong.Name(name),
		kong.Description(description),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.Exit(os.Exit),
	}, opts...)
	p, err := kong.New(cli, opts...)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "build command line")
	}
	ctx, err := p.Parse(args)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "")
	}
	return ctx, nil
}

// OptionValues turns --option k=v pairs into decoder options. Each value
// stays text until the format that declares the option types it, so "10"
// is an integer for an integer option and a string for a string one.
func OptionValues(m map[string]string) evidence.Object {
	out := evidence.Object{}
	for k, v := range m {
		out[k] = param.FlagText(v)
	}
	return out
}
